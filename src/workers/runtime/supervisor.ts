import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackgroundService } from '../../shared/background-service.ts';
import type { LedgeMetrics } from '../../shared/ledge-metrics.ts';
import type { Logger } from '../../shared/logger.ts';
import { WorkerErrors } from '../errors.ts';
import type { FunctionRuntime } from '../service.ts';
import { isLoaded, type DeployedScript } from '../types.ts';
import { AccountBackend } from './account-backend.ts';
import { writeFrontConfig, writeWorkerdConfig, type R2ServiceResolver } from './config.ts';
import { limitsFor, type ProcessLimits } from './limits.ts';
import { scriptLoadError } from './load-error.ts';
import { openListeningSockets, openUnixSockets, steerConnections, type ListeningSocket } from './listen-socket.ts';
import type { FunctionLogHub } from './log-hub.ts';
import type { TailTraces } from './tail-traces.ts';
import { claimFunctionsPort, type PortClaim } from './port-claim.ts';
import { callScheduled, type ScheduledOutcome } from './scheduled-call.ts';
import { WorkerdGroup } from './workerd-group.ts';
import { isWorkerdNoise } from './workerd-noise.ts';
import { Watchdog } from './watchdog.ts';
import { WorkerdProcess, workerdMaxCompatibilityDate } from './workerd-process.ts';

export type { R2ServiceResolver } from './config.ts';

/** Where and how functions are served (the server's --functions-* settings). */
export interface FunctionsConfig {
  functionsHost: string;
  functionsPort: number;
  functionsDomain: string;
  functionsProcesses: number;
}

export interface RuntimeDeps {
  config: FunctionsConfig;
  runtimeDir: string;
  logger: Logger;
  logs: FunctionLogHub;
  /** Per-request traces for tail sessions (tail-traces.ts). */
  traces: TailTraces;
  r2: R2ServiceResolver;
  /** The scripts to serve, read fresh on every (re)load. */
  deployed: () => Promise<DeployedScript[]>;
  /** Counts workerd restarts; function request figures are pulled on scrape (function-metrics.ts). */
  metrics?: LedgeMetrics | undefined;
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
 *
 * Accounts are isolated from each other (workerd runs a process's JavaScript on one thread and has no
 * limits of its own): with one account, the generation's processes run its scripts; with several, they
 * are front processes that only route by Host, each account's scripts run in a backend process of their
 * own (account-backend.ts), and a runaway is answered with 1102 by the front. Every process that runs
 * functions is watched (watchdog.ts) and killed at its CPU or memory limit.
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
  #watchdog: Watchdog;
  #sockDir: string | undefined;
  #pings = 0;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#watchdog = new Watchdog(deps.logger);
  }

  /** The port functions are served on (known once started; the real one when configured as 0). */
  get port(): number | undefined {
    return this.#sockets?.[0]?.port;
  }

  /** The process ids of the running generation on the functions port (tests kill them to check the restart). */
  get pids(): number[] {
    return this.#current?.pids ?? [];
  }

  /** The processes running an account's functions now: its backend, or the shared ones. */
  /** The ping sockets of every process that runs functions now (function-metrics.ts scrapes them). */
  pingSockets(): string[] {
    const current = this.#current;
    if (!current) return [];
    const processes = current.backends.length > 0 ? current.backends.map((b) => b.process) : current.processes;
    return processes.flatMap((p) => (p?.running && p.pingSocket ? [p.pingSocket] : []));
  }

  /**
   * Runs a script's scheduled() handler (a Cron Trigger) in a process that serves the account, through
   * its ping service. Only scripts the runtime loads (routed on workers.dev, or with Cron Triggers) can run.
   */
  async runScheduled(target: {
    accountId: string;
    script: string;
    cron: string;
    scheduledTime: number;
  }): Promise<ScheduledOutcome> {
    const current = this.#current;
    const process = current?.backends.length
      ? current.backends.find((b) => b.accountId === target.accountId)?.process
      : current?.processes.find((p) => p.running);
    if (!process?.pingSocket) return { outcome: 'not_loaded' };
    return callScheduled(process.pingSocket, target);
  }

  accountPids(accountId: string): number[] {
    const current = this.#current;
    if (!current) return [];
    if (current.backends.length === 0) return current.pids;
    const pid = current.backends.find((b) => b.accountId === accountId)?.pid;
    return pid === undefined ? [] : [pid];
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
    this.#watchdog.stop();
    if (this.#sockDir) rmSync(this.#sockDir, { recursive: true, force: true });
    this.#sockDir = undefined;
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
        throw scriptLoadError((error as Error).message, candidate);
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
    let next: WorkerdGroup | undefined;
    let backends: AccountBackend[] = [];
    try {
      const deployed = await this.#deps.deployed();
      const accounts = loadedByAccount(deployed);
      let configPath: string;
      let pingSockets: string[] | undefined;
      if (accounts.size > 1) {
        // Several accounts: each runs in its own process behind the front processes (see the class comment).
        backends = await this.#startBackends(generation, accounts);
        configPath = writeFrontConfig(dir, {
          domain: this.#deps.config.functionsDomain,
          backends: backends.map((backend) => ({
            address: `unix:${backend.socketPath}`,
            hosts: accounts
              .get(backend.accountId)!
              .filter((d) => d.script.workers_dev)
              .map((d) => `${d.script.name}.${d.subdomain}`),
          })),
        });
      } else {
        configPath = writeWorkerdConfig(dir, { ...this.#configInput(deployed, 'router'), ping: true });
        pingSockets = sockets.map(() => this.#pingSocketPath());
      }
      next = new WorkerdGroup(
        sockets.map((socket) => socket.handle),
        { configPath, pingSockets, ...this.#processOutput(generation), readyTimeoutMs: READY_TIMEOUT_MS },
        backends,
      );
      await next.ready;
      if (pingSockets) {
        const limits = limitsFor([...accounts.values()].flat());
        for (const process of next.processes) this.#watch(process, limits, { generation });
      }
    } catch (error) {
      await Promise.all(backends.map((b) => b.stop(1_000)));
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
    const fields = { code, pid: process.child.pid, delay_ms: delay };
    this.#deps.metrics?.workerdRestarts.inc({ reason: process.limitExceeded ? 'limit' : 'crash' });
    if (process.limitExceeded) this.#deps.logger.info('restarting the functions processes after a limit kill', fields);
    else this.#deps.logger.error('workerd exited unexpectedly; restarting', fields);
    setTimeout(() => {
      this.reload().catch((error: unknown) => this.#deps.logger.error('workerd restart failed', { err: error }));
    }, delay).unref();
  }

  /** Starts one backend process per account (in parallel), each on its own held unix socket. */
  async #startBackends(generation: number, accounts: Map<string, DeployedScript[]>): Promise<AccountBackend[]> {
    const entries = [...accounts];
    const paths = entries.map((_, index) => join(this.#socketDir(), `g${generation}-a${index}.sock`));
    const sockets = await openUnixSockets(paths);
    const backends = entries.map(
      ([accountId, scripts], index) =>
        new AccountBackend({
          accountId,
          socket: sockets[index]!,
          socketPath: paths[index]!,
          launch: () => this.#launchBackend(generation, accountId, scripts, sockets[index]!),
          logger: this.#deps.logger,
          onRestart: (reason) => this.#deps.metrics?.workerdRestarts.inc({ reason }),
        }),
    );
    const started = await Promise.allSettled(backends.map((b) => b.start()));
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(backends.map((b) => b.stop(1_000)));
      throw failed.reason;
    }
    return backends;
  }

  /** One process of an account's backend: written config, started on the socket, ready, watched. */
  async #launchBackend(
    generation: number,
    accountId: string,
    scripts: DeployedScript[],
    socket: ListeningSocket,
  ): Promise<WorkerdProcess> {
    const dir = join(this.#deps.runtimeDir, `gen-${generation}-${randomUUID()}`);
    try {
      const configPath = writeWorkerdConfig(dir, { ...this.#configInput(scripts, 'router'), ping: true });
      const process = new WorkerdProcess({
        configPath,
        socket: socket.handle,
        pingSocket: this.#pingSocketPath(),
        ...this.#processOutput(generation),
        readyTimeoutMs: READY_TIMEOUT_MS,
      });
      await process.ready;
      this.#watch(process, limitsFor(scripts), { generation, account: accountId });
      return process;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  #watch(process: WorkerdProcess, limits: ProcessLimits, label: Record<string, unknown>): void {
    if (process.pingSocket) this.#watchdog.watch(process, { pingSocket: process.pingSocket, limits, label });
  }

  #processOutput(generation: number) {
    return {
      onStdoutLine: (line: string, process: WorkerdProcess) => {
        if (this.#deps.traces.ingestLine(line, process)) return;
        if (!this.#deps.logs.ingestLine(line)) this.#deps.logger.info('workerd', { generation, line });
      },
      onStderrLine: (line: string) =>
        isWorkerdNoise(line)
          ? this.#deps.logger.debug('workerd', { generation, line })
          : this.#deps.logger.warn('workerd', { generation, line }),
    };
  }

  /**
   * Where the unix sockets of this runtime live: `<runtime>/sockets`, or a private directory under the
   * system's temporary one when that path is too long for a unix socket address (108 bytes).
   */
  #socketDir(): string {
    if (!this.#sockDir) {
      const preferred = join(this.#deps.runtimeDir, 'sockets');
      this.#sockDir = preferred.length <= 80 ? preferred : mkdtempSync(join(realpathSync(tmpdir()), 'ledge-sockets-'));
      rmSync(this.#sockDir, { recursive: true, force: true });
      mkdirSync(this.#sockDir, { recursive: true, mode: 0o700 });
    }
    return this.#sockDir;
  }

  #pingSocketPath(): string {
    return join(this.#socketDir(), `ping-${++this.#pings}.sock`);
  }

  #configInput(scripts: DeployedScript[], mode: 'router' | 'single') {
    return {
      scripts,
      r2: this.#deps.r2,
      domain: this.#deps.config.functionsDomain,
      maxCompatibilityDate: this.#maxDate,
      tailFlagsDir: this.#deps.traces.flagsDir,
      mode,
    };
  }
}

/** The scripts the runtime runs (routed on workers.dev, or with Cron Triggers), by account. */
function loadedByAccount(deployed: DeployedScript[]): Map<string, DeployedScript[]> {
  const accounts = new Map<string, DeployedScript[]>();
  for (const d of deployed) {
    if (!isLoaded(d)) continue;
    accounts.set(d.script.account_id, [...(accounts.get(d.script.account_id) ?? []), d]);
  }
  return accounts;
}

/** workerd prefixes load errors with the service name ("service acct/script: Uncaught ..."): keep the message. */
function cleanWorkerdError(text: string): string {
  return text.replace(/^service [^:]+: /gm, '').trim();
}
