import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { liveServers, registryDir, type RegisteredServer } from '../shared/server-registry.ts';
import { CliError } from './errors.ts';

/** The `ledge server` of this machine that a command without credentials (or admin, mail) talks to. */
export interface LocalServer {
  dataDir: string;
  /** From the registry when the server runs; else the URL credentials.json was written with. */
  apiUrl: string | undefined;
  running: boolean;
}

/** The data dir a command names: --data-dir, then LEDGE_DATA_DIR. */
export function explicitDataDir(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const dir = flag || env['LEDGE_DATA_DIR'];
  return dir ? resolve(dir) : undefined;
}

/** Compares API URLs loosely: no trailing slash, `/client/v4` implied, localhost = 127.0.0.1. */
export function sameApiUrl(a: string, b: string): boolean {
  const canonical = (value: string) => {
    try {
      const url = new URL(normalizeApiUrl(value));
      if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
      return url.href.replace(/\/+$/, '');
    } catch {
      return value;
    }
  };
  return canonical(a) === canonical(b);
}

/** A base URL given without a path (http://host:port) means that server's /client/v4. */
export function normalizeApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`invalid API URL "${value}": expected e.g. http://127.0.0.1:8787/client/v4`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid API URL "${value}": use http:// or https://`);
  }
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/client/v4';
  return url.href.replace(/\/+$/, '');
}

/**
 * Finds the local server: the data dir a command names; else a running registered server (the one
 * that serves `apiUrl` when a URL is given, the one using ./.ledge if several run, the only one
 * otherwise); else ./.ledge when it holds credentials. Several running servers and nothing to choose
 * between them is an error that lists them.
 */
export function findLocalServer(
  options: { dataDir?: string | undefined; apiUrl?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): LocalServer | undefined {
  const explicit = explicitDataDir(options.dataDir, env);
  const live = liveServers(env);
  if (explicit) {
    const entry = live.find((s) => s.data_dir === explicit);
    return { dataDir: explicit, apiUrl: entry?.api_url ?? savedApiUrl(explicit), running: entry !== undefined };
  }
  if (options.apiUrl) {
    const entry = live.find((s) => sameApiUrl(s.api_url, options.apiUrl!));
    if (entry) return fromEntry(entry);
  }
  const here = resolve('.ledge');
  // A URL that no registered server serves: only ./.ledge may hold its credentials (the old rule).
  if (options.apiUrl && !live.some((s) => s.data_dir === here)) {
    return existsSync(join(here, 'credentials.json'))
      ? { dataDir: here, apiUrl: undefined, running: false }
      : undefined;
  }
  const chosen = live.find((s) => s.data_dir === here) ?? (live.length === 1 ? live[0] : undefined);
  if (chosen) return fromEntry(chosen);
  if (live.length > 1) {
    const list = live.map((s) => `  ${s.api_url}  (data dir ${s.data_dir}, pid ${s.pid})`).join('\n');
    throw new CliError(
      `${live.length} Ledge servers are running:\n${list}\n` +
        'choose one with --api-url <url> (API commands) or --data-dir <dir> (admin, mail), or LEDGE_DATA_DIR',
    );
  }
  if (existsSync(join(here, 'credentials.json'))) return { dataDir: here, apiUrl: savedApiUrl(here), running: false };
  return undefined;
}

/**
 * The data dir admin and mail open: the one named, else the running local server's, else ./.ledge when
 * it holds a database. Nothing found is an error: opening an empty ./.ledge would make a new data dir
 * that no server uses (a named one may be new on purpose, e.g. prepared before its first start).
 */
export function localDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = explicitDataDir(flag, env);
  if (explicit) return explicit;
  const found = findLocalServer({}, env)?.dataDir;
  if (found) return found;
  const here = resolve('.ledge');
  if (existsSync(join(here, 'ledge.db'))) return here;
  throw new CliError(
    `no Ledge data dir: no running \`ledge server\` is registered in ${registryDir(env)} and there is no ./.ledge here. ` +
      'Start `ledge server`, or name the data dir with --data-dir or LEDGE_DATA_DIR',
  );
}

/** Where a user is told the registry lives when no server is found. */
export function registryHint(env: NodeJS.ProcessEnv = process.env): string {
  return registryDir(env);
}

function fromEntry(entry: RegisteredServer): LocalServer {
  return { dataDir: entry.data_dir, apiUrl: entry.api_url, running: true };
}

function savedApiUrl(dataDir: string): string | undefined {
  return readCredentialsFile(dataDir)?.api_url;
}

/** The first-boot credentials a server keeps in its data dir (mode 0600), if readable. */
export function readCredentialsFile(dataDir: string):
  | {
      api_url?: string;
      api_token?: string;
      email?: string;
      api_key?: string;
      account_id?: string;
    }
  | undefined {
  const path = join(dataDir, 'credentials.json');
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch {
    return undefined;
  }
}
