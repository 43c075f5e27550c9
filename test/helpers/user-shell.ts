import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, tempDir, type CliResult } from './ledge.ts';
export { EPHEMERAL_PORT_FLAGS } from './server-ports.ts';
import { poll } from './wait.ts';

/** `ledge` as `npm link` puts it on a user's PATH: the sh wrapper that runs the CLI with the pinned Node. */
export const LEDGE_BIN = join(REPO_ROOT, 'bin/ledge');
/** The machine's own Node (Debian's /usr/bin/node: Node 20 here), as a user's shell finds it. */
export const SYSTEM_NODE_DIR = existsSync('/usr/bin/node') ? '/usr/bin' : undefined;
/** The Node 24 that Ledge pins (npm's `node` package). */
export const PINNED_NODE_DIR = join(REPO_ROOT, 'node_modules/node/bin');

/**
 * The environment of a new user's shell: a scratch HOME, no LEDGE_*, CLOUDFLARE_* or npm_* variables
 * (vitest may run under npm), and the given PATH (default: the system directories only).
 */
export function userEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(LEDGE_|CLOUDFLARE_|CF_|WRANGLER_|npm_|NODE_|VITEST|XDG_)/i.test(name)) continue;
    env[name] = value;
  }
  return { ...env, HOME: home, PATH: '/usr/local/bin:/usr/bin:/bin', NO_COLOR: '1', ...extra };
}

/** A fresh HOME directory, as a new user on the machine has. */
export function scratchHome(): string {
  const home = tempDir('ledge-home-');
  mkdirSync(join(home, '.config'), { recursive: true });
  return home;
}

/** Runs a command the way a user types it in a shell (no shell, though: arguments are passed as given). */
export function runAs(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A long-running process (a server) whose output is collected as it comes. */
export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches, rejects if the process exits first or `timeoutMs` passes. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the signal (if still running) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startAs(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; detached?: boolean },
): Running {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    for (const check of watchers) check();
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const done = () => {
          watchers.delete(check);
          clearTimeout(timer);
        };
        const check = () => {
          const match = stdout.match(pattern);
          if (match) {
            done();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${stdout}\nstderr: ${stderr}`));
        }, timeoutMs);
        watchers.add(check);
        void exited.then(({ code, signal }) => {
          if (!watchers.has(check)) return;
          done();
          reject(new Error(`exited (${code ?? signal}) before ${pattern}; stdout: ${stdout}\nstderr: ${stderr}`));
        });
        check();
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The live (not zombie) descendants of a process, from /proc: children, their children, ... */
export function descendants(pid: number): { pid: number; command: string }[] {
  const table = new Map<number, { ppid: number; command: string; state: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      table.set(Number(entry), {
        ppid: Number(ppid),
        command: stat.slice(stat.indexOf('(') + 1, close),
        state: state!,
      });
    } catch {
      // exited meanwhile
    }
  }
  const found: { pid: number; command: string }[] = [];
  const walk = (parent: number) => {
    for (const [child, info] of table) {
      if (info.ppid !== parent || info.state === 'Z') continue;
      found.push({ pid: child, command: info.command });
      walk(child);
    }
  };
  walk(pid);
  return found;
}

/** The process runs and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Whether nothing at all holds the port: an exclusive bind (no SO_REUSEPORT) succeeds. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Polls `check` every 50 ms until true or `timeoutMs`; returns the time it took, or undefined. */
export async function within(timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<number | undefined> {
  const started = Date.now();
  return poll(async () => (await check()) && Date.now() - started, { timeoutMs });
}
