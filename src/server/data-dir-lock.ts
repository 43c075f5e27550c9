import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';

/** The data dir this process serves, held until release(); see lockDataDir. */
export interface DataDirLock {
  /** Once the API listens: what a refused second server is told. */
  setApiUrl(apiUrl: string): void;
  release(): void;
}

/** Who holds a data dir: its PID, and its API URL once it listens. */
interface Holder {
  pid: number;
  api_url?: string | undefined;
}

/** Thrown by lockDataDir when another server holds the data dir; the CLI prints it and exits 1. */
export class DataDirInUse extends Error {
  constructor(dataDir: string, holder: Holder | undefined) {
    const who = holder
      ? `ledge server PID ${holder.pid} (${holder.api_url ? `API ${holder.api_url}` : 'still starting, no API URL yet'})`
      : 'another ledge server';
    super(
      `data dir ${dataDir} is in use by ${who}: a data dir serves one server at a time; ` +
        'stop that server, or give this one its own --data-dir (env LEDGE_DATA_DIR)',
    );
    this.name = 'DataDirInUse';
  }
}

/** How long a refused server waits for the holder to say who it is, and how often it retries a vanished one. */
const ASK_TIMEOUT_MS = 2_000;
const ATTEMPTS = 5;

/**
 * Makes this process the only server of `dataDir`, before anything else touches the directory: a second
 * server would share its database and blob files, rewrite its workerd configs and delete its runtime
 * sockets. Rejects with DataDirInUse naming the holder.
 *
 * On Linux the lock is an abstract Unix socket named after the data dir's real path (the trick of
 * port-claim.ts): the kernel binds a name once, so of two servers starting at the same moment exactly one
 * wins, and it frees the name when the holder dies, even by SIGKILL, so a killed server leaves nothing
 * stale to take over. The holder answers a connection with its PID and API URL, which is how the refused
 * server names it. (Abstract names are per network namespace: two containers sharing one volume are not
 * covered.) Elsewhere a `server.lock` file with the PID stands in, taken over when that PID is gone.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  // Creating the (empty) directory is harmless to a running holder, and gives a real path to name it by.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const holder: Holder = { pid: process.pid };
  if (process.platform !== 'linux') return lockFile(dataDir, holder);
  const name = `\0ledge-data-dir:${createHash('sha256').update(realpathSync(dataDir)).digest('hex').slice(0, 40)}`;
  for (let attempt = 1; ; attempt++) {
    const server = await bind(name, holder);
    if (server) {
      return {
        setApiUrl: (apiUrl) => void (holder.api_url = apiUrl),
        release: () => server.close(),
      };
    }
    const other = await ask(name);
    // Nobody answered: the holder exited between our bind and our question; the name is free again.
    if (other || attempt >= ATTEMPTS) throw new DataDirInUse(dataDir, other);
  }
}

/** Listens on the abstract name; resolves undefined when another process holds it. */
function bind(name: string, holder: Holder): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(`${JSON.stringify(holder)}\n`);
    });
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(new Error(`cannot lock the data dir: ${error.message}`, { cause: error }));
    });
    server.listen(name, () => {
      // The lock must not keep the process alive on its own.
      server.unref();
      resolve(server);
    });
  });
}

/** What the holder of the name says about itself, or undefined when it does not answer. */
function ask(name: string): Promise<Holder | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(name);
    const done = (holder: Holder | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(holder);
    };
    const timer = setTimeout(() => done(undefined), ASK_TIMEOUT_MS);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk.slice(0, 4096)));
    socket.on('end', () => done(parseHolder(text)));
    socket.on('error', () => done(undefined));
  });
}

function parseHolder(text: string): Holder | undefined {
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (typeof value.pid !== 'number') return undefined;
    return { pid: value.pid, api_url: typeof value.api_url === 'string' ? value.api_url : undefined };
  } catch {
    return undefined;
  }
}

/**
 * Without abstract sockets: `server.lock` (0600) with the holder's PID and API URL, created exclusively. A
 * file whose PID no longer runs is stale (its server was killed) and is replaced. Two servers replacing the
 * same stale file at the same moment can both win here, which the socket lock above rules out on Linux.
 */
function lockFile(dataDir: string, holder: Holder): DataDirLock {
  const path = join(dataDir, 'server.lock');
  const write = (flag: 'wx' | 'w') => writeFileSync(path, `${JSON.stringify(holder)}\n`, { mode: 0o600, flag });
  try {
    write('wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const other = parseHolder(readFileSync(path, 'utf8'));
    if (other && other.pid !== process.pid && alive(other.pid)) throw new DataDirInUse(dataDir, other);
    write('w');
  }
  return {
    setApiUrl: (apiUrl) => {
      holder.api_url = apiUrl;
      write('w');
    },
    release: () => rmSync(path, { force: true }),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
