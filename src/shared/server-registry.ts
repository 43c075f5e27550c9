import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Clock } from './clock.ts';
import { isoNow } from './time.ts';

/**
 * The per-user list of running `ledge server` processes, so that `ledge` finds the local server (its API
 * URL and data dir, hence its credentials) from any directory with no flags or environment.
 *
 * One file per server in `<config dir>/servers/` (the config dir of `ledge login`: LEDGE_CONFIG_DIR, else
 * $XDG_CONFIG_HOME/ledge, else ~/.config/ledge), mode 0600. A server removes its file when it exits;
 * files of processes that are gone (kill -9, crash) are ignored and pruned by the next reader. The file
 * holds no secret: the credentials stay in the data dir's credentials.json.
 */
export interface RegisteredServer {
  pid: number;
  /** When the process started, as the kernel counts it (Linux), so a reused pid is not taken for it. */
  process_start?: string;
  api_url: string;
  data_dir: string;
  started_at: string;
  /** The other doors of the server as it listens now (a port of 0 was resolved), so `ledge` prints real URLs. */
  endpoints?: ServerEndpoints;
}

export interface ServerEndpoints {
  s3_api_port?: number | undefined;
  traffic_port?: number | undefined;
  functions_port?: number | undefined;
  functions_domain?: string | undefined;
  /** Suffix of managed public bucket URLs (`pub-<bucket id>.<suffix>`). */
  public_domain?: string | undefined;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['LEDGE_CONFIG_DIR'] || join(env['XDG_CONFIG_HOME'] || join(homedir(), '.config'), 'ledge');
}

export function registryDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'servers');
}

/**
 * Records a running server; the file is removed when this process exits (any clean exit, including the
 * end of a signal handler). Returns a function that removes it earlier. Never throws: a server whose
 * registration fails still serves, it is only not found automatically.
 */
export function registerRunningServer(
  server: { apiUrl: string; dataDir: string; endpoints?: ServerEndpoints },
  clock: Clock,
  env: NodeJS.ProcessEnv = process.env,
): () => void {
  const dir = registryDir(env);
  const file = join(dir, `${process.pid}-${clock.now()}.json`);
  const processStart = processStartTime(process.pid);
  const entry: RegisteredServer = {
    pid: process.pid,
    ...(processStart ? { process_start: processStart } : {}),
    api_url: loopbackUrl(server.apiUrl),
    data_dir: resolve(server.dataDir),
    started_at: isoNow(clock),
    ...(server.endpoints ? { endpoints: server.endpoints } : {}),
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written aside then renamed: a reader never sees half a file.
    writeFileSync(`${file}.tmp`, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    return () => {};
  }
  const remove = () => {
    rmSync(file, { force: true });
    process.off('exit', remove);
  };
  process.on('exit', remove);
  return remove;
}

/** The registered servers whose process is alive (stale files are deleted on the way). */
export function liveServers(env: NodeJS.ProcessEnv = process.env): RegisteredServer[] {
  const dir = registryDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
  const servers: RegisteredServer[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    let entry: RegisteredServer;
    try {
      entry = JSON.parse(readFileSync(path, 'utf8')) as RegisteredServer;
    } catch {
      continue; // being written or damaged: not a server to talk to
    }
    if (typeof entry.pid !== 'number' || typeof entry.api_url !== 'string' || typeof entry.data_dir !== 'string') {
      continue;
    }
    if (isAlive(entry.pid) && (!entry.process_start || entry.process_start === processStartTime(entry.pid))) {
      servers.push(entry);
    } else rmSync(path, { force: true });
  }
  return servers;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the pid now belongs to another user's process, so not our server either.
    return false;
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined where there is no /proc. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** A server listening on every address (0.0.0.0, ::) is reached on loopback from this machine. */
function loopbackUrl(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.href.replace(/\/+$/, '');
}
