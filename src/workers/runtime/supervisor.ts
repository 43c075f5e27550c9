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
import { openListeningSockets, steerConnections, type ListeningSocket } from './listen-socket.ts';
import type { FunctionLogHub } from './log-hub.ts';
import { claimFunctionsPort, type PortClaim } from './port-claim.ts';
import { WorkerdGroup } from './workerd-group.ts';
import { isWorkerdNoise } from './workerd-noise.ts';
import { WorkerdProcess, workerdMaxCompatibilityDate } from './workerd-process.ts';

export type { R2ServiceResolver } from './config.ts';

export interface RuntimeDeps {
  config: Pick<ServerConfig, 'functionsHost' | 'functionsPort' | 'functionsDomain' | 'functionsProcesses'>;
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
 * generation (`functionsProcesses` processes, each on its own socket, see workerd-group.ts), waits until it
 * listens, then SIGTERMs the previous one, which finishes its in-flight requests: a redeploy refuses no
 * connection. A generation with a process that dies unexpectedly is replaced at once (its other
 * processes serve meanwhile; backing off only when it keeps crashing).
 */
export class FunctionsRuntime implements BackgroundService, FunctionRuntime {
  readonly name = 'functions-runtime';
  readonly #deps: RuntimeDeps;
  readonly #maxDate = workerdMaxCompatibilityDate();
  /** The running generation's sockets: one per workerd process, indices 0..n-1 of the port's group. */
  #sockets: ListeningSocket[] | undefined;
  /** Keeps other servers off the functions port while this one runs (see claimFunctionsPort). */
  #claim: PortClaim | undefined;
  /** Whether each generation gets its own steered sockets (see steerConnections); else they share them. */
  #steering: Promise<boolean> = Promise.resolve(false);
  #current: WorkerdGroup | undefined;
  readonly #retiring = new Set<WorkerdGroup>();
  #queue: Promise<void> = Promise.resolve();
  #generation = 0;
  #stopped = false;
  #recentCrashes: number[] = [];

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
  }

  /** The port functions are served on (known once started; the real one when configured as 0). */
  get port(): number | undefined {
    return this.#sockets?.[0]?.port;
  }

  /** The process ids of the running generation (tests kill them to check the restart). */
  get pids(): number[] {
    return this.#current?.pids ?? [];
  }

  async start(): Promise<void> {
    const started = Date.now();
    this.#stopped = false;
    const { functionsHost, functionsPort, functionsProcesses } = this.#deps.config;
    this.#claim = await claimFunctionsPort(functionsHost, functionsPort);
    let sockets: ListeningSocket[];
    try {
      sockets = await openListeningSockets(functionsHost, functionsPort, functionsProcesses);
    } catch (error) {
      this.#releaseClaim();
      throw error;
    }
    this.#sockets = sockets;
    try {
      await this.reload();
    } catch (error) {
      await this.stop();
      throw error;
    }
    // Spread connections evenly over the processes (the kernel's own hash can be lopsided with few
    // sockets), and learn whether swaps can be steered. After the first generation serves, so the
    // python3 it spawns does not compete with workerd's start for the CPU (time to first response).
    this.#steering = steerConnections(sockets[0]!, { base: 0, count: sockets.length }).then((steering) => {
      if (!steering) {
        this.#deps.logger.warn(
          'python3 not found: workerd generations share their sockets, so a redeploy may reset connections opened during the swap',
        );
      }
      return steering;
    });
    this.#deps.logger.info('functions runtime started', {
      port: this.port,
      processes: sockets.length,
      ms: Date.now() - started,
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#queue;
    const all = [this.#current, ...this.#retiring].filter((g): g is WorkerdGroup => g !== undefined);
    this.#current = undefined;
    await Promise.all(all.map((p) => p.stop(2_000)));
    for (const socket of this.#sockets ?? []) socket.handle.close();
    this.#sockets = undefined;
    this.#releaseClaim();
  }

  #releaseClaim(): void {
    this.#claim?.release();
    this.#claim = undefined;
  }

  reload(): Promise<void> {
    if (!this.#sockets || this.#stopped) return Promise.resolve();
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

  /**
   * Starts the next generation and retires the current one. After a crash (a process of the current one
   * died) the new generation joins the same socket: connections queued there while fewer processes
   * accepted are served, not dropped with a closing socket, and the survivors serve until it is up.
   */
  async #swap(): Promise<void> {
    const current = this.#sockets;
    if (!current || this.#stopped) return;
    const generation = ++this.#generation;
    const previous = this.#current;
    const { functionsHost, functionsProcesses } = this.#deps.config;
    // Fresh sockets per generation when steering works and nothing crashed. First pin new connections
    // to the running generation (indices 0..n-1), so the next sockets' holder never gets one; the new
    // sockets join the group after them (n..2n-1).
    const steered =
      previous?.healthy === true &&
      (await this.#steering) &&
      (await steerConnections(current[0]!, { base: 0, count: current.length }));
    const sockets = steered ? await openListeningSockets(functionsHost, current[0]!.port, functionsProcesses) : current;
    // Then (the holder is gone) send them to the new sockets: they wait in their backlogs until the new
    // generation is up, and the old one has all that time to read what it accepted before.
    if (steered) await steerConnections(current[0]!, { base: current.length, count: sockets.length });
    // The config holds decrypted secrets: it lives on disk (0600) only until workerd has read it.
    const dir = join(this.#deps.runtimeDir, `gen-${generation}`);
    let next: WorkerdGroup;
    try {
      const configPath = writeWorkerdConfig(dir, this.#configInput(await this.#deps.deployed(), 'router'));
      next = new WorkerdGroup(
        sockets.map((socket) => socket.handle),
        {
          configPath,
          onStdoutLine: (line) => {
            if (!this.#deps.logs.ingestLine(line)) this.#deps.logger.info('workerd', { generation, line });
          },
          onStderrLine: (line) =>
            isWorkerdNoise(line)
              ? this.#deps.logger.debug('workerd', { generation, line })
              : this.#deps.logger.warn('workerd', { generation, line }),
          readyTimeoutMs: READY_TIMEOUT_MS,
        },
      );
      await next.ready;
    } catch (error) {
      if (sockets !== current) {
        // Back to the running generation; connections already queued on the new sockets are lost. They
        // are the last of the group, so closing them from the end moves no other socket's index.
        await steerConnections(current[0]!, { base: 0, count: current.length });
        for (const socket of [...sockets].reverse()) socket.handle.close();
      }
      throw WorkerErrors.runtimeUnavailable(cleanWorkerdError((error as Error).message));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    this.#current = next;
    this.#sockets = sockets;
    void next.exited.then(({ process, code }) => this.#onExit(next, process, code));
    if (previous) {
      // New connections now go to the new sockets; the old generation finishes the requests it has,
      // then exits. Waiting for that means that once a deploy answers, no connection can still reach
      // the old code (keep-alive connections included).
      this.#retiring.add(previous);
      const shared = sockets === current ? await this.#steerPastSurvivors(previous, current) : false;
      if (sockets !== current || shared) await new Promise((r) => setTimeout(r, SETTLE_MS));
      await previous.stop().finally(() => this.#retiring.delete(previous));
      if (sockets !== current) await this.#closeRetiredSockets(current, sockets.length);
      if (shared) await steerConnections(current[0]!, { base: 0, count: current.length });
    }
  }

  /**
   * After a crash the new generation shares the old one's sockets, and a survivor that is SIGTERMed closes
   * the connections it accepted but has not read a request from yet (workerd drains that way). So, before
   * the SIGTERM, new connections go only to the socket of a process that died: no survivor accepts there,
   * so in the settle time the survivors read what they accepted and nothing new reaches them. Returns
   * whether it steered (the caller spreads connections over all sockets again after the retirement).
   */
  async #steerPastSurvivors(previous: WorkerdGroup, sockets: ListeningSocket[]): Promise<boolean> {
    const dead = previous.processes.findIndex((p) => !p.running);
    if (dead < 0 || !(await this.#steering)) return false;
    return steerConnections(sockets[0]!, { base: dead, count: 1 });
  }

  /**
   * Closes the retired sockets (indices 0..n-1; the live ones are n..n+m-1) without a new connection
   * ever reaching one. Closing a socket moves the last one of the group into its slot, so closing them
   * from index n-1 down shifts the live range down by one each time; before each close, connections go
   * to the live sockets whose index is the same before and after it. With one live socket there is no
   * such index: the kernel then falls back to its hash over what remains, which is only the live socket
   * once the retired one is gone (the close detaches it at once).
   */
  async #closeRetiredSockets(retired: ListeningSocket[], live: number): Promise<void> {
    for (let index = retired.length - 1; index >= 0; index--) {
      if (live > 1) await steerConnections(retired[index]!, { base: index + 1, count: live - 1 });
      retired[index]!.handle.close();
    }
    const [first] = this.#sockets ?? [];
    if (first) await steerConnections(first, { base: 0, count: live });
  }

  #onExit(group: WorkerdGroup, process: WorkerdProcess, code: number | null): void {
    if (group.stopping || this.#stopped || this.#current !== group) return;
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
