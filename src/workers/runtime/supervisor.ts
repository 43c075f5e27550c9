import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerConfig } from '../../server/config.ts';
import type { BackgroundService } from '../../server/platform.ts';
import type { Logger } from '../../shared/logger.ts';
import { WorkerErrors } from '../errors.ts';
import type { FunctionRuntime } from '../service.ts';
import type { DeployedScript } from '../types.ts';
import { writeWorkerdConfig, type R2ServiceResolver } from './config.ts';
import { openListeningSocket, steerConnections, type ListeningSocket } from './listen-socket.ts';
import type { FunctionLogHub } from './log-hub.ts';
import { WorkerdProcess, workerdMaxCompatibilityDate } from './workerd-process.ts';

export type { R2ServiceResolver } from './config.ts';

export interface RuntimeDeps {
  config: Pick<ServerConfig, 'functionsHost' | 'functionsPort' | 'functionsDomain'>;
  runtimeDir: string;
  logger: Logger;
  logs: FunctionLogHub;
  r2: R2ServiceResolver;
  /** The scripts to serve, read fresh on every (re)load. */
  deployed: () => Promise<DeployedScript[]>;
}

const READY_TIMEOUT_MS = 15_000;
/** Time the old generation gets to read the requests of connections it accepted before the steering. */
const SETTLE_MS = 100;

/**
 * Supervises workerd. Node opens the functions socket once; every change starts a new workerd
 * generation on the same fd, waits until it listens, then SIGTERMs the previous one, which finishes its
 * in-flight requests: a redeploy refuses no connection. A generation that dies unexpectedly is replaced
 * at once (backing off only when it keeps crashing).
 */
export class FunctionsRuntime implements BackgroundService, FunctionRuntime {
  readonly name = 'functions-runtime';
  readonly #deps: RuntimeDeps;
  readonly #maxDate = workerdMaxCompatibilityDate();
  #socket: ListeningSocket | undefined;
  /** Whether each generation gets its own steered socket (see steerConnections); else they share one. */
  #steering: Promise<boolean> = Promise.resolve(false);
  #current: WorkerdProcess | undefined;
  readonly #retiring = new Set<WorkerdProcess>();
  #queue: Promise<void> = Promise.resolve();
  #generation = 0;
  #stopped = false;
  #recentCrashes: number[] = [];

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
  }

  /** The port functions are served on (known once started; the real one when configured as 0). */
  get port(): number | undefined {
    return this.#socket?.port;
  }

  /** The running generation's process id (tests kill it to check the restart). */
  get pid(): number | undefined {
    return this.#current?.child.pid;
  }

  async start(): Promise<void> {
    const started = Date.now();
    this.#stopped = false;
    const { functionsHost, functionsPort } = this.#deps.config;
    this.#socket = await openListeningSocket(functionsHost, functionsPort);
    await this.reload();
    // Only later swaps need the steering. Checked once the first generation serves, so the python3 it
    // spawns does not compete with workerd's start for the CPU (time to first response).
    this.#steering = steerConnections(this.#socket, 0).then((steering) => {
      if (!steering) {
        this.#deps.logger.warn(
          'python3 not found: workerd generations share one socket, so a redeploy may reset connections opened during the swap',
        );
      }
      return steering;
    });
    this.#deps.logger.info('functions runtime started', { port: this.#socket.port, ms: Date.now() - started });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#queue;
    const all = [this.#current, ...this.#retiring].filter((p): p is WorkerdProcess => p !== undefined);
    this.#current = undefined;
    await Promise.all(all.map((p) => p.stop(2_000)));
    this.#socket?.handle.close();
    this.#socket = undefined;
  }

  reload(): Promise<void> {
    if (!this.#socket || this.#stopped) return Promise.resolve();
    const run = this.#queue.then(() => this.#swap());
    this.#queue = run.catch(() => undefined);
    return run;
  }

  functionUrl(script: string, subdomain: string): string | undefined {
    const port = this.port ?? (this.#deps.config.functionsPort || undefined);
    if (port === undefined) return undefined;
    return `http://${script}.${subdomain}.${this.#deps.config.functionsDomain}${port === 80 ? '' : `:${port}`}`;
  }

  async check(candidate: DeployedScript): Promise<void> {
    const dir = join(this.#deps.runtimeDir, `check-${randomUUID()}`);
    try {
      const configPath = writeWorkerdConfig(dir, this.#configInput([candidate], 'single'));
      const process = new WorkerdProcess({
        configPath,
        onStdoutLine: () => undefined,
        onStderrLine: () => undefined,
        readyTimeoutMs: READY_TIMEOUT_MS,
      });
      try {
        await process.ready;
      } catch (error) {
        throw WorkerErrors.scriptStartupFailed(cleanWorkerdError((error as Error).message));
      } finally {
        await process.stop(1_000);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async #swap(): Promise<void> {
    if (!this.#socket || this.#stopped) return;
    const generation = ++this.#generation;
    const previous = this.#current;
    // A fresh socket per generation when steering works; a restart after a crash reuses the socket.
    // First pin new connections to the running generation, so the next socket's holder never gets one.
    const steered = previous !== undefined && (await this.#steering) && (await steerConnections(this.#socket, 0));
    const socket = steered
      ? await openListeningSocket(this.#deps.config.functionsHost, this.#socket.port)
      : this.#socket;
    // Then (the holder is gone) send them to the new socket: they wait in its backlog until the new
    // generation is up, and the old one has all that time to read what it accepted before.
    if (steered) await steerConnections(socket, 1);
    // The config holds decrypted secrets: it lives on disk (0600) only until workerd has read it.
    const dir = join(this.#deps.runtimeDir, `gen-${generation}`);
    let next: WorkerdProcess;
    try {
      const configPath = writeWorkerdConfig(dir, this.#configInput(await this.#deps.deployed(), 'router'));
      next = new WorkerdProcess({
        configPath,
        socket: socket.handle,
        onStdoutLine: (line) => {
          if (!this.#deps.logs.ingestLine(line)) this.#deps.logger.info('workerd', { generation, line });
        },
        onStderrLine: (line) => this.#deps.logger.warn('workerd', { generation, line }),
        readyTimeoutMs: READY_TIMEOUT_MS,
      });
      await next.ready;
    } catch (error) {
      if (socket !== this.#socket) {
        // Back to the running generation; connections already queued on the new socket are lost.
        await steerConnections(this.#socket, 0);
        socket.handle.close();
      }
      throw WorkerErrors.runtimeUnavailable(cleanWorkerdError((error as Error).message));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const previousSocket = this.#socket;
    this.#current = next;
    this.#socket = socket;
    void next.exited.then((code) => this.#onExit(next, code));
    if (previous) {
      // New connections now go to the new socket; the old generation finishes the requests it has,
      // then exits. Waiting for that means that once a deploy answers, no connection can still reach
      // the old code (keep-alive connections included).
      this.#retiring.add(previous);
      if (socket !== previousSocket) await new Promise((r) => setTimeout(r, SETTLE_MS));
      await previous.stop().finally(() => this.#retiring.delete(previous));
      if (socket !== previousSocket) previousSocket.handle.close();
    }
  }

  #onExit(process: WorkerdProcess, code: number | null): void {
    if (process.stopping || this.#stopped || this.#current !== process) return;
    this.#current = undefined;
    const now = Date.now();
    this.#recentCrashes = [...this.#recentCrashes.filter((t) => now - t < 10_000), now];
    // Restart at once; only a crash loop backs off (up to 1 s) so it cannot spin a core.
    const delay = Math.min(1_000, (this.#recentCrashes.length - 1) * 200);
    this.#deps.logger.error('workerd exited unexpectedly; restarting', {
      code,
      pid: process.child.pid,
      delay_ms: delay,
    });
    setTimeout(() => {
      this.reload().catch((error: unknown) => this.#deps.logger.error('workerd restart failed', { err: error }));
    }, delay).unref();
  }

  #configInput(scripts: DeployedScript[], mode: 'router' | 'single') {
    return {
      scripts,
      r2: this.#deps.r2,
      domain: this.#deps.config.functionsDomain,
      maxCompatibilityDate: this.#maxDate,
      mode,
    };
  }
}

/** workerd prefixes load errors with the service name ("service acct/script: Uncaught ..."): keep the message. */
function cleanWorkerdError(text: string): string {
  return text.replace(/^service [^:]+: /gm, '').trim();
}
