import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { GulpedOutput } from './gulped-output.ts';
import { serviceSocketName } from './service-sockets.ts';
import { httpSocketName } from './config/index.ts';

/** The workerd binary from npm (the ELF itself, not a Node shim, so no extra Node process per generation). */
export function workerdBinary(): string {
  const pkg = createRequire(import.meta.url).resolve('workerd/package.json');
  return realpathSync(join(dirname(pkg), 'bin', 'workerd'));
}

/**
 * workerd must not outlive `ledge server`, even one killed with SIGKILL: it would keep serving old code
 * and holding the functions port. util-linux's `setpriv --pdeathsig KILL` sets PR_SET_PDEATHSIG and execs
 * workerd in place (same pid, same inherited fds), so the kernel kills it when its parent dies. Without
 * setpriv (not Linux), workerd is started directly and only a clean shutdown stops it.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/**
 * workerd creates some files itself (the watchdog's ping sockets), with its umask's mode: a shell sets
 * umask 177 (files 0600; workerd makes no directories) and execs it in place (same pid, same fds), so they
 * are private like the rest of the data dir from the moment they exist.
 */
const PRIVATE_UMASK = ['/bin/sh', '-c', 'umask 177 && exec "$0" "$@"'];
/** How long a process that exited before it was ready may still take to close its stderr (its last words). */
const STDERR_DRAIN_MS = 2_000;

export function spawnBoundToParent(binary: string, args: string[], options: Parameters<typeof spawn>[2]): ChildProcess {
  const command = [...PRIVATE_UMASK, binary, ...args];
  return SETPRIV
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', ...command], options)
    : spawn(command[0]!, command.slice(1), options);
}

/** The newest compatibility date the installed workerd supports: its version is 1.YYYYMMDD.N. */
export function workerdMaxCompatibilityDate(): string {
  const pkg = createRequire(import.meta.url)('workerd/package.json') as { version: string };
  const digits = pkg.version.split('.')[1] ?? '20250101';
  return `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}`;
}

/** Why the watchdog killed a process (see watchdog.ts). */
export type LimitExceeded = 'cpu' | 'memory';

export interface WorkerdOptions {
  configPath: string;
  /** Runs workerd with --experimental (its `assets` service needs it). */
  experimental?: boolean | undefined;
  /**
   * Inherited listening sockets, the config's `http`, `http-1`, ... (see httpSocketName); without them the
   * config's own address is used (upload checks).
   */
  sockets?: readonly { fd: number }[] | undefined;
  /** The unix socket path of the config's "ping" socket (configs with a watchdog, see config.ts). */
  pingSocket?: string | undefined;
  /** Where to bind the config's `svc-<i>` sockets, the entrypoints other scripts bind to (service-sockets.ts). */
  serviceSockets?: readonly string[] | undefined;
  /** Gets the process that wrote the line too (tail-traces.ts reports requests of a process that died). */
  onStdoutLine: (line: string, process: WorkerdProcess) => void;
  onStderrLine: (line: string) => void;
  readyTimeoutMs: number;
  /** The sockets that must all listen before it is ready (default: `http`); `ready` gets the first's port. */
  readySockets?: string[] | undefined;
}

/** One running workerd. `ready` settles once it listens (resolves with the port) or fails to start. */
export class WorkerdProcess {
  /**
   * Every process with a ping socket that has not exited yet, whatever its role or generation (starting,
   * serving, retiring): what an R2 invalidation must reach (r2-invalidation.ts).
   */
  static readonly live = new Set<WorkerdProcess>();
  readonly child: ChildProcess;
  readonly ready: Promise<number>;
  readonly exited: Promise<number | null>;
  /**
   * Resolves once the process exited and every line it wrote on stdout was given to onStdoutLine (stdout
   * is read in gulps, see gulped-output.ts, so lines may still wait in the pipe when `exited` resolves).
   */
  readonly outputEnded: Promise<void>;
  /** The unix socket the watchdog pings, when the config has one. */
  readonly pingSocket: string | undefined;
  /** Set by the watchdog when it kills this process for exceeding a limit. */
  limitExceeded: LimitExceeded | undefined;
  #stderrTail: string[] = [];
  #stopping = false;

  constructor(options: WorkerdOptions) {
    const args = ['serve', options.configPath, '--control-fd', '3'];
    if (options.experimental) args.push('--experimental');
    // stdio: 0 ignored, 1 the gulped output's pipe, 2 piped, 3 = control pipe, 4... = the inherited
    // listening sockets. The config's directory is private and lives until workerd is ready.
    const stdout = new GulpedOutput(dirname(options.configPath), (line) => options.onStdoutLine(line, this));
    this.outputEnded = stdout.ended;
    const stdio: (string | number | object)[] = ['ignore', stdout.stdio, 'pipe', 'pipe'];
    options.sockets?.forEach((socket, index) => {
      stdio.push(socket);
      args.push('--socket-fd', `${httpSocketName(index)}=${stdio.length - 1}`);
    });
    this.pingSocket = options.pingSocket;
    if (options.pingSocket) args.push('--socket-addr', `ping=unix:${options.pingSocket}`);
    options.serviceSockets?.forEach((path, index) =>
      args.push('--socket-addr', `${serviceSocketName(index)}=unix:${path}`),
    );
    // In a process group of its own (detached): Ctrl+C or a closing terminal signals the whole foreground
    // group, and a workerd killed by that signal would race the server's shutdown (and be restarted as a
    // crash). The server alone decides: it SIGTERMs workerd, which finishes its requests in flight.
    this.child = spawnBoundToParent(workerdBinary(), args, { stdio: stdio as never, detached: true });
    stdout.attach(this.child.stdout);
    // 'exit' can come before the last of stderr is read, and a load error is said there.
    const stderrClosed = new Promise<void>((resolve) => this.child.stderr!.once('close', () => resolve()));
    lines(this.child.stderr!, (line) => {
      this.#stderrTail.push(line);
      if (this.#stderrTail.length > 20) this.#stderrTail.shift();
      options.onStderrLine(line);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    if (options.pingSocket) {
      WorkerdProcess.live.add(this);
      void this.exited.then(() => WorkerdProcess.live.delete(this));
    }
    void this.exited.then(() => stdout.drain());
    this.ready = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`workerd did not report readiness within ${options.readyTimeoutMs} ms`));
        this.child.kill('SIGKILL');
      }, options.readyTimeoutMs);
      const waiting = options.readySockets ?? ['http'];
      const ports = new Map<string, number>();
      lines(this.child.stdio[3] as Readable, (line) => {
        try {
          const message = JSON.parse(line) as { event?: string; socket?: string; port?: number };
          if (message.event === 'listen' && message.socket && waiting.includes(message.socket)) {
            ports.set(message.socket, message.port ?? 0);
            if (ports.size < waiting.length) return;
            clearTimeout(timer);
            resolve(ports.get(waiting[0]!) ?? 0);
          }
        } catch {
          // not a control message
        }
      });
      void this.exited.then(async (code) => {
        clearTimeout(timer);
        // Bounded: a process workerd started could still hold the pipe open.
        await Promise.race([stderrClosed, new Promise((r) => setTimeout(r, STDERR_DRAIN_MS).unref())]);
        reject(new Error(this.errorText() || `workerd exited with code ${code} before it was ready`));
      });
    });
    this.ready.catch(() => undefined);
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** What workerd said on stderr (its load errors, e.g. "Uncaught SyntaxError ..."). */
  errorText(): string {
    return this.#stderrTail.join('\n').trim();
  }

  /** The process has not exited (by itself or by a signal). */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM (workerd finishes in-flight requests), then SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopping = true;
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

function lines(stream: Readable, onLine: (line: string) => void): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
}
