import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '../shared/crypto.ts';

/** Layout of the data dir. Everything Ledge persists lives under it. */
export function dataPaths(dataDir: string) {
  return {
    root: dataDir,
    database: join(dataDir, 'ledge.db'),
    credentials: join(dataDir, 'credentials.json'),
    secretKey: join(dataDir, 'secret.key'),
    /** The PostgreSQL URL of a data dir whose records are there (see rememberDatabaseUrl). */
    databaseUrl: join(dataDir, 'database-url'),
    blobs: join(dataDir, 'blobs'),
    runtime: join(dataDir, 'runtime'),
    mail: join(dataDir, 'mail'),
    logs: join(dataDir, 'logs'),
    /** Durable Objects' storage, one directory per account (workers/durable-objects/storage.ts). */
    durableObjects: join(dataDir, 'durable-objects'),
    /** This node's name among the nodes sharing one PostgreSQL (see nodeIdOf). */
    nodeId: join(dataDir, 'node-id'),
  };
}

/** Directories under the data dir are 0700 and everything else in them 0600: only Ledge's user reads them. */
export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/**
 * Written once every path under the data dir has been brought to those modes. Ledge creates each file
 * and directory with them, so later starts skip the walk (a data dir may hold many blob files) unless
 * the marker is missing or the data dir itself has looser modes again (copied, restored, re-created).
 */
const MODES_MARKER = '.modes-v1';

/**
 * Creates the data dir (0700), makes sure the database file exists 0600 before SQLite opens it (SQLite
 * creates -wal and -shm with the database file's mode, and a new database with 0644), and tightens
 * modes left looser by an older version, another tool or a permissive umask.
 */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
  const paths = dataPaths(dataDir);
  closeSync(openSync(paths.database, 'a', FILE_MODE));
  const marker = join(dataDir, MODES_MARKER);
  if ((lstatSync(dataDir).mode & 0o777) !== DIR_MODE || !existsSync(marker)) {
    tightenModes(dataDir);
    writeFileSync(marker, '1\n', { mode: FILE_MODE });
  }
}

/** Sets 0700 on every directory and 0600 on every other entry under (and including) `root`. */
export function tightenModes(root: string): void {
  setMode(root, DIR_MODE);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    // A symlink's own mode means nothing on Linux, and following it could chmod files outside the dir.
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) tightenModes(path);
    else setMode(path, FILE_MODE);
  }
}

function setMode(path: string, mode: number): void {
  try {
    if ((lstatSync(path).mode & 0o777) !== mode) chmodSync(path, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Removed meanwhile (a temp file of a previous run): nothing to protect.
    if (code === 'ENOENT') return;
    throw new Error(`cannot set mode ${mode.toString(8)} on ${path}: ${code ?? String(error)}`, { cause: error });
  }
}

/** Loads the at-rest encryption key: from config if given, else from `secret.key` (created 0600 once). */
export function loadSecretBox(dataDir: string, configuredKey?: string): SecretBox {
  if (configuredKey) {
    const key = Buffer.from(configuredKey, 'base64');
    if (key.length !== 32) throw new Error('LEDGE_SECRET_KEY must be 32 bytes, base64-encoded');
    return new SecretBox(key);
  }
  const path = dataPaths(dataDir).secretKey;
  if (!existsSync(path)) writeFileSync(path, SecretBox.generateKey().toString('base64'), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return new SecretBox(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
}

/**
 * A data dir whose records live in PostgreSQL remembers the database URL (0600, like the keys next to it),
 * so that `ledge admin` pointed at the data dir reaches the same records as its server without being told
 * again. A server on SQLite forgets it.
 */
export function rememberDatabaseUrl(dataDir: string, url: string | undefined): void {
  const path = dataPaths(dataDir).databaseUrl;
  if (url === undefined) rmSync(path, { force: true });
  else writeFileSync(path, `${url}\n`, { mode: FILE_MODE });
}

export function rememberedDatabaseUrl(dataDir: string): string | undefined {
  try {
    return readFileSync(dataPaths(dataDir).databaseUrl, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * This node's name among the nodes that share a database: LEDGE_NODE_ID, or one made once and kept in the data
 * dir, so a restarted node is the same node (it releases its own outbox leases at start, and keeps its share of
 * the health checks) while two nodes, each with its own data dir, never share a name.
 */
export function nodeIdOf(dataDir: string, configured: string | undefined): string {
  if (configured !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(configured)) {
      throw new Error('LEDGE_NODE_ID must be 1 to 64 letters, digits, dots, dashes or underscores');
    }
    return configured;
  }
  const path = dataPaths(dataDir).nodeId;
  try {
    const kept = readFileSync(path, 'utf8').trim();
    if (kept !== '') return kept;
  } catch {
    // First start of this data dir.
  }
  const made = `${hostname()
    .replace(/[^A-Za-z0-9.-]/g, '-')
    .slice(0, 40)}-${randomBytes(4).toString('hex')}`;
  writeFileSync(path, `${made}\n`, { mode: FILE_MODE });
  return made;
}
