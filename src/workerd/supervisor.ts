import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackgroundService } from '../shared/background-service.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import { hostedWorkflows, isLoaded, routedScriptKey, type ScriptToRun } from './script.ts';
import {
  buildFrontConfig,
  buildFunctionsConfig,
  writeConfig,
  writeFrontRoutes,
  type FrontRoutes,
  type R2ServiceResolver,
} from './config/index.ts';
import { LoadedBefore } from './loaded-before.ts';
import { runtimeFingerprint, scriptKey } from './fingerprint.ts';
import { ScriptBackend } from './script-backend.ts';
import { exposeEntrypoints } from './service-exposure.ts';
import { missingEntrypoint, serviceSocketPath, withServedEntrypoints } from './service-sockets.ts';
import { limitsFor, type ProcessLimits } from './limits.ts';
import type { ReloadReport, ScriptRuntimeStatus } from './script.ts';
import { loadFailureDetail } from './load-error.ts';
import { openUnixSockets, type ListeningSocket } from './listen-socket.ts';
import { PortGenerations } from './port-generations.ts';
import type { FunctionLogHub } from './log-hub.ts';
import type { TailTraces } from './tail-traces.ts';
import { claimFunctionsPort, type PortClaim } from './port-claim.ts';
import { callScheduled, type ScheduledOutcome } from './scheduled-call.ts';
import { callWorkflowEngine, type WorkflowEngineAnswer } from './workflow-call.ts';
import { WorkerdGroup } from './workerd-group.ts';
import type { EngineSockets } from './config/bindings/contract.ts';
import type { ClusterConfig } from './config/types.ts';
import { isWorkerdNoise } from './workerd-noise.ts';
import type { EnginesClusterSettings } from './engine-host.ts';
import { clusterStopGraceMs, scriptClusterConfig } from './objects-cluster.ts';
import { MissingDurableObjectClassError, missingDurableObjectClass } from './missing-class.ts';
import { Watchdog } from './watchdog.ts';
import { WorkerdProcess, workerdMaxCompatibilityDate } from './workerd-process.ts';
import type { FunctionsEgress } from './network-service.ts';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';
import type { PortSetting } from '../shared/http-listener/port-in-use.ts';

export type { R2ServiceResolver } from './config/index.ts';

/** Where and how functions are served (the server's --functions-* settings). */
export interface FunctionsConfig {
  functionsHost: string;
  functionsPort: number;
  /** The setting that moves the port (`--functions-port`), named when another process holds it. */
  functionsPortSetting: PortSetting;
  functionsDomain: string;
  functionsProcesses: number;
  /** The operator's --egress-allow / --egress-deny, which functions' fetch() and connect() follow too. */
  egress?: FunctionsEgress | undefined;
  /** The secret of routed scripts' router keys (script.ts routedScriptKey), shared with the traffic port. */
  routeKey?: string | undefined;
}

export interface RuntimeDeps {
  config: FunctionsConfig;
  runtimeDir: string;
  logger: Logger;
  logs: FunctionLogHub;
  /** Per-request traces for tail sessions (tail-traces.ts). */
  traces: TailTraces;
  /** Start times and the crash loop's back-off. */
  clock: Clock;
  r2: R2ServiceResolver;
  /** Where the accounts' data engines listen (engine-host.ts), for KV and D1 bindings. */
  engines?: EngineSockets | undefined;
  /** The scripts to serve, read fresh on every (re)load. */
  deployed: () => Promise<ScriptToRun[]>;
  /** Counts workerd restarts; function request figures are pulled on scrape (function-metrics.ts). */
  metrics?: LedgeMetrics | undefined;
  /** How long a script's process may take to load it (LEDGE_FUNCTIONS_START_TIMEOUT_MS, default 15 s). */
  startTimeoutMs?: number | undefined;
  /** fetch() calls one invocation may make (LEDGE_SUBREQUESTS_PER_INVOCATION, default Cloudflare's 10,000). */
  subrequestsPerInvocation?: number | undefined;
  /** Storage one SQLite-backed Durable Object may use (isolate/object-limits.ts); Cloudflare's 10 GB without it. */
  durableObjectMaxBytes?: number | undefined;
  /** Root of the accounts' Durable Object storage (`<data>/durable-objects`); without it, objects live in memory. */
  durableObjectsDir?: string | undefined;
  /**
   * Set on several nodes: the process of each script that hosts Durable Objects (or Workflows) is one instance of
   * the script's workerd cluster (objects-cluster.ts), so each object runs on one node at a time.
   */
  objectsCluster?: EnginesClusterSettings | undefined;
}

/**
 * How long a replaced backend keeps serving after the routes table changed: the routers re-read it at most
 * every 100 ms (isolate/entry-router.ts), and a request that read the old table must still reach its process.
 */
const ROUTE_SETTLE_MS = 300;
/** Slots a front generation declares beyond those in use, so that new scripts and redeploys need no new front. */
const SPARE_SLOTS = 32;

/** One script the runtime should run now: what it is, and the fingerprint of that. */
interface Wanted {
  key: string;
  deployed: ScriptToRun;
  fingerprint: string;
}

/**
 * Supervises workerd. The unit of failure is the script: whatever a tenant's code does while it loads or
 * runs, only that script is affected (docs/security.md, "Failure domains").
 *
 * - With one loaded script on the whole server (the common self-hosted case, and the benchmark), the
 *   generation's processes run it directly on the functions port (`functionsProcesses` processes, each on
 *   its own socket, see workerd-group.ts); one process on all of them when it hosts Durable Objects, which
 *   must each have one live instance (see #swapExclusive).
 * - Otherwise each script runs in a backend process of its own (script-backend.ts: one isolate, so
 *   Cloudflare's per-isolate memory and per-invocation CPU limits are the process's), and front processes
 *   that run only the entry router forward each request by Host. A runaway is answered with 1102 by the
 *   front. The routes table is a file the routers re-read (config/write.ts writeFrontRoutes), so a redeploy starts
 *   the script's new process on a new slot, points its host there, and retires the old process once the
 *   routers have moved: no front restarts, no client connection is closed.
 * - A script that cannot start (throws, hangs past the start-up timeout, runs out of memory while it loads)
 *   fails alone: its previous process keeps serving when there is one, else its host answers 503 with error
 *   1101 (quarantined) and `status()` says why. The failure is remembered by fingerprint, so other changes do
 *   not try it again; a deploy, a secret or a delete of that script does. Start-up never fails because of one.
 *
 * Every process that runs functions is watched (watchdog.ts) and killed at its CPU or memory limit.
 */
export class FunctionsRuntime implements BackgroundService {
  readonly name = 'functions-runtime';
  readonly #deps: RuntimeDeps;
  readonly #maxDate = workerdMaxCompatibilityDate();
  readonly #startTimeoutMs: number;
  /** The functions port's sockets, handed from generation to generation. */
  readonly #ports: PortGenerations;
  /** Keeps other servers off the functions port while this one runs (see claimFunctionsPort). */
  #claim: PortClaim | undefined;
  /** The processes on the functions port: the one script itself (direct), or the front. */
  #current: WorkerdGroup | undefined;
  /** What `#current` is: the fingerprint of the script it runs (direct), or the front's slots and table. */
  #direct: Wanted | undefined;
  #front: { slots: Set<number>; routesDir: string; table: FrontRoutes } | undefined;
  /** The scripts' backend processes (front mode), by script key. */
  #backends = new Map<string, ScriptBackend>();
  #nextSlot = 0;
  #fronts = 0;
  /** Configurations that failed to start, by script key: not tried again until the fingerprint changes. */
  readonly #failed = new Map<string, { fingerprint: string; reason: string; at: string }>();
  readonly #status = new Map<string, ScriptRuntimeStatus>();
  /** Upload checks that passed: the same config again loads without a throwaway workerd (loaded-before.ts). */
  readonly #loadedBefore = new LoadedBefore();
  #queue: Promise<unknown> = Promise.resolve();
  #generation = 0;
  #stopped = false;
  #recentCrashes: number[] = [];
  #watchdog: Watchdog;
  #sockDir: string | undefined;
  #pings = 0;
  #entrySockets = 0;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#startTimeoutMs = deps.startTimeoutMs ?? 15_000;
    this.#watchdog = new Watchdog(deps.logger);
    this.#ports = new PortGenerations(deps.config.functionsHost, deps.config.functionsProcesses);
  }

  /** The port functions are served on (known once started; the real one when configured as 0). */
  get port(): number | undefined {
    return this.#ports.port;
  }

  /** The process ids of the running generation on the functions port (tests kill them to check the restart). */
  get pids(): number[] {
    return this.#current?.pids ?? [];
  }

  /** The stable socket path where a script's entrypoint is served (service-sockets.ts), whether it runs yet or not. */
  entrypointSocket(accountId: string, script: string, entrypoint: string): string {
    return serviceSocketPath(this.#socketDir(), accountId, script, entrypoint);
  }

  /** The ping sockets of every process that runs functions now (function-metrics.ts scrapes them). */
  pingSockets(): string[] {
    const processes = this.#direct
      ? (this.#current?.processes ?? [])
      : [...this.#backends.values()].map((b) => b.process);
    return processes.flatMap((p) => (p?.running && p.pingSocket ? [p.pingSocket] : []));
  }

  /** Whether each loaded script runs, or why it does not (`ledge scripts`, the API's runtime status). */
  status(accountId: string): Map<string, ScriptRuntimeStatus> {
    const prefix = scriptKey(accountId, '');
    return new Map(
      [...this.#status].filter(([key]) => key.startsWith(prefix)).map(([key, s]) => [key.slice(prefix.length), s]),
    );
  }

  /**
   * Runs a script's scheduled() handler (a Cron Trigger) in the process that runs it, through its ping
   * service. Only scripts the runtime loads (routed on workers.dev, or with Cron Triggers) can run.
   */
  async runScheduled(target: {
    accountId: string;
    script: string;
    cron: string;
    scheduledTime: number;
  }): Promise<ScheduledOutcome> {
    const process = this.#processesOf(scriptKey(target.accountId, target.script)).find((p) => p.pingSocket);
    if (!process?.pingSocket) return { outcome: 'not_loaded' };
    return callScheduled(process.pingSocket, target);
  }

  /** A call to the Workflows engine of a script (workflow-call.ts), in the process that runs it. */
  async callWorkflows(
    target: { accountId: string; script: string },
    call: string,
    query: Record<string, string>,
    body?: unknown,
  ): Promise<WorkflowEngineAnswer> {
    const process = this.#processesOf(scriptKey(target.accountId, target.script)).find((p) => p.pingSocket);
    if (!process?.pingSocket) {
      return { status: 503, body: { error: { code: 'not_loaded', message: "the Workflow's script is not running" } } };
    }
    return callWorkflowEngine(process.pingSocket, target, call, query, body);
  }

  /** The processes running an account's functions now. */
  accountPids(accountId: string): number[] {
    const prefix = scriptKey(accountId, '');
    if (this.#direct) return this.#direct.key.startsWith(prefix) ? this.pids : [];
    return [...this.#backends]
      .filter(([key]) => key.startsWith(prefix))
      .flatMap(([, backend]) => (backend.pid === undefined ? [] : [backend.pid]));
  }

  /** The processes running one script now. */
  scriptPids(accountId: string, script: string): number[] {
    return this.#processesOf(scriptKey(accountId, script)).flatMap((p) => (p.child.pid ? [p.child.pid] : []));
  }

  #processesOf(key: string): WorkerdProcess[] {
    if (this.#direct) return this.#direct.key === key ? (this.#current?.processes.filter((p) => p.running) ?? []) : [];
    const process = this.#backends.get(key)?.process;
    return process ? [process] : [];
  }

  async start(): Promise<void> {
    const started = this.#deps.clock.monotonic();
    this.#stopped = false;
    const { functionsHost, functionsPort, functionsProcesses } = this.#deps.config;
    this.#claim = await claimFunctionsPort(functionsHost, functionsPort, this.#deps.config.functionsPortSetting);
    try {
      await this.#ports.open(functionsPort);
    } catch (error) {
      this.#releaseClaim();
      throw error;
    }
    let report: ReloadReport;
    try {
      report = await this.reload();
    } catch (error) {
      await this.stop();
      throw error;
    }
    // After the first generation serves, so the python3 it spawns does not compete with workerd's start for
    // the CPU (time to first response).
    this.#ports.learnSteering(this.#deps.logger);
    for (const [key, reason] of report.failed) {
      this.#deps.logger.warn('a function could not start and is quarantined', { script: key, reason });
    }
    this.#deps.logger.info('functions runtime started', {
      port: this.port,
      processes: functionsProcesses,
      ms: Math.round(this.#deps.clock.monotonic() - started),
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#queue;
    const all = [this.#current, ...this.#ports.retiring].filter((g): g is WorkerdGroup => g !== undefined);
    this.#current = undefined;
    this.#direct = undefined;
    this.#front = undefined;
    await Promise.all(all.map((p) => p.stop(2_000)));
    // A clustered backend hands its objects to the other nodes first (ScriptBackend's stopGraceMs).
    await Promise.all([...this.#backends.values()].map((b) => b.stop(2_000)));
    this.#backends.clear();
    this.#ports.close();
    this.#watchdog.stop();
    if (this.#sockDir) rmSync(this.#sockDir, { recursive: true, force: true });
    this.#sockDir = undefined;
    this.#releaseClaim();
  }

  #releaseClaim(): void {
    this.#claim?.release();
    this.#claim = undefined;
  }

  /**
   * Brings what runs in line with the deployments. Resolves with the scripts whose new configuration failed
   * to start (each is reported to its own deploy; it never fails the others); rejects only when the runtime
   * itself cannot start processes (the front runs no tenant code).
   */
  reload(): Promise<ReloadReport> {
    return this.#enqueue(false);
  }

  #enqueue(restartFront: boolean): Promise<ReloadReport> {
    if (!this.#ports.sockets || this.#stopped) return Promise.resolve({ failed: new Map() });
    const run = this.#queue.then(() => this.#apply(restartFront));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  functionUrl(script: string, subdomain: string): string | undefined {
    const port = this.port ?? (this.#deps.config.functionsPort || undefined);
    if (port === undefined) return undefined;
    return `http://${script}.${subdomain}.${this.#deps.config.functionsDomain}${port === 80 ? '' : `:${port}`}`;
  }

  /**
   * Loads one script in a throwaway workerd exactly as a script's own process runs it (same config, wrapper
   * and V8 flags), as it is served on workers.dev (the wrapper that guards its Host reads the default export
   * the way serving does: wrangler enables the route right after an upload).
   */
  async check(candidate: ScriptToRun): Promise<string | undefined> {
    if (this.#loadedBefore.has(candidate)) return undefined;
    const dir = join(this.#deps.runtimeDir, `check-${randomUUID()}`);
    try {
      const served = { ...candidate, script: { ...candidate.script, workers_dev: true } };
      const stderr: string[] = [];
      const process = new WorkerdProcess({
        configPath: this.#scriptConfig(dir, served, { checkOnly: true }),
        experimental: needsExperimental(served),
        pingSocket: this.#pingSocketPath(),
        onStdoutLine: () => undefined,
        onStderrLine: (line) => stderr.push(line),
        readyTimeoutMs: this.#startTimeoutMs,
      });
      let failure: string | undefined;
      try {
        await process.ready;
      } catch (error) {
        failure = (error as Error).message;
      } finally {
        await process.stop(1_000);
      }
      if (candidate.durableObjects?.length) {
        // workerd only warns about a Durable Object class the script does not export (the class's limited
        // export may then fail the load too): its whole output counts.
        const output = process.child.stderr;
        if (output && !output.closed) await new Promise((resolve) => output.once('close', resolve));
        const missing = missingDurableObjectClass([...stderr, failure ?? '']);
        if (missing !== undefined) throw new MissingDurableObjectClassError(missing);
      }
      if (failure !== undefined) return loadFailureDetail(failure, candidate.sourceMaps);
      this.#loadedBefore.add(candidate);
      return undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async #apply(restartFront: boolean): Promise<ReloadReport> {
    if (!this.#ports.sockets || this.#stopped) return { failed: new Map() };
    const deployed = withServedEntrypoints(await this.#deps.deployed());
    const wanted = deployed.filter(isLoaded).map((d) => ({
      key: scriptKey(d.script.account_id, d.script.name),
      deployed: d,
      fingerprint: runtimeFingerprint(d),
    }));
    const failed = new Map<string, string>();
    for (const key of this.#status.keys()) if (!wanted.some((w) => w.key === key)) this.#status.delete(key);
    for (const key of this.#failed.keys()) if (!wanted.some((w) => w.key === key)) this.#failed.delete(key);
    // A sole script whose latest version failed to start goes on with the previous version it runs directly (after
    // a crash of that process too), rather than falling to the front, which would have no version of it to run.
    const previous = this.#direct;
    const only = wanted[0] && this.#knownToFail(wanted[0]) && previous?.key === wanted[0].key ? previous : wanted[0];
    if (wanted.length === 1 && this.#runsDirect(only!)) {
      if (!restartFront && this.#direct?.fingerprint === only!.fingerprint) return { failed };
      try {
        if (hostsDurableObjects(only!.deployed)) await this.#swapExclusive(only!);
        else await this.#swapGroup(only!);
        this.#running(only!);
        return { failed };
      } catch (error) {
        const reason = loadFailureDetail((error as Error).message);
        this.#remember(only!, reason);
        failed.set(only!.key, reason);
        // The previous generation ran this script: it keeps serving its previous version.
        if (this.#direct?.key === only!.key) {
          this.#running(this.#direct);
          return { failed };
        }
      }
    }
    await this.#applyFront(wanted, failed, restartFront);
    return { failed };
  }

  /**
   * Whether the server's only script runs on the functions port itself, with no front process forwarding to it.
   * Entrypoints are served by backend processes only (a queue consumer's relay, say), and so is a script that is
   * an instance of its workerd cluster on several nodes (it hands its objects over when it stops).
   */
  #runsDirect(only: Wanted): boolean {
    const { deployed } = only;
    return (
      deployed.script.workers_dev &&
      !deployed.routed &&
      (deployed.entrypoints?.length ?? 0) === 0 &&
      !(hostsDurableObjects(deployed) && this.#deps.objectsCluster) &&
      !this.#knownToFail(only)
    );
  }

  /**
   * Direct mode for a script hosting Durable Objects, whose objects must each have exactly one live instance:
   * what serves the port now stops before the new generation starts (connections wait in the port's backlog
   * meanwhile; they are not reset), and that generation is one process on every socket of the port. If it cannot
   * start, the previous version of the same script starts again.
   */
  async #swapExclusive(direct: Wanted): Promise<void> {
    const previous = this.#direct;
    await this.#stopServing();
    try {
      await this.#swapGroup(direct);
    } catch (error) {
      if (previous?.key === direct.key) {
        await this.#swapGroup(previous).catch((again: unknown) =>
          this.#deps.logger.error('the previous version failed to start again', { script: direct.key, err: again }),
        );
      }
      throw error;
    }
  }

  /**
   * Stops what serves the functions port (the direct generation, or the front and its backends) and leaves the
   * port's sockets open, so connections wait in their backlog for what starts next.
   */
  async #stopServing(): Promise<void> {
    const previous = this.#current;
    if (!previous || !this.#ports.sockets) return;
    const sockets = await this.#ports.next(previous);
    this.#current = undefined;
    await this.#ports.handOver(previous, sockets);
    // The front's backends stop once the front has finished the requests it forwarded to them.
    const backends = [...this.#backends.values()];
    this.#backends.clear();
    await Promise.all(backends.map((b) => b.stop()));
    if (this.#front) rmSync(this.#front.routesDir, { recursive: true, force: true });
    this.#front = undefined;
    this.#direct = undefined;
  }

  #knownToFail(wanted: Wanted): boolean {
    return this.#failed.get(wanted.key)?.fingerprint === wanted.fingerprint;
  }

  #remember(wanted: Wanted, reason: string): void {
    const at = isoNow(this.#deps.clock);
    this.#failed.set(wanted.key, { fingerprint: wanted.fingerprint, reason, at });
    this.#deps.logger.warn('a function failed to start', { script: wanted.key, reason });
  }

  #running(wanted: Wanted): void {
    this.#status.set(wanted.key, {
      state: 'running',
      version_id: wanted.deployed.version.id,
      ...this.#failureOf(wanted.key),
    });
  }

  #failureOf(key: string): Pick<ScriptRuntimeStatus, 'failure'> {
    const failure = this.#failed.get(key);
    return failure ? { failure: { reason: failure.reason, at: failure.at } } : {};
  }

  /**
   * Front mode: each script in a process of its own. Unchanged processes stay; changed and new scripts start
   * theirs (in parallel, each on its own); then the routes table moves their hosts, and the replaced
   * processes are retired once no router can still pick them.
   */
  async #applyFront(wanted: Wanted[], failed: Map<string, string>, restartFront: boolean): Promise<void> {
    const wasDirect = this.#direct;
    // Its objects' next instances are about to start in a backend: the direct process stops first.
    if (wasDirect && hostsDurableObjects(wasDirect.deployed)) await this.#stopServing();
    const next = new Map<string, ScriptBackend>();
    const quarantined: Wanted[] = [];
    const toStart: Wanted[] = [];
    for (const w of wanted) {
      const running = this.#backends.get(w.key);
      if (running?.fingerprint === w.fingerprint) next.set(w.key, running);
      else if (!this.#knownToFail(w)) toStart.push(w);
      else if (running) next.set(w.key, running);
      else quarantined.push(w);
    }
    // A script hosting Durable Objects is replaced in place (its old process stops first, on the same slot),
    // so that no object ever runs in two processes at once.
    // They go first: a class transferred to another script stops in its old process before the new one starts.
    const inPlace = toStart.filter((w) => hostsDurableObjects(w.deployed) && this.#backends.has(w.key));
    const startedInPlace = await Promise.all(inPlace.map((w) => this.#replaceInPlace(w)));
    const started = await this.#startBackends(toStart.filter((w) => !inPlace.includes(w)));
    for (const [index, w] of inPlace.entries()) {
      toStart.splice(toStart.indexOf(w), 1);
      toStart.push(w);
      started.push(startedInPlace[index]!);
    }
    // A script the direct generation runs now has already loaded in this very config: a failure to start it
    // again (going from one script to several) can only be one at random, so it gets one more try before it is
    // quarantined for another script's deploy.
    const again = toStart.filter(
      (w, index) => started[index]!.status === 'rejected' && wasDirect?.fingerprint === w.fingerprint,
    );
    if (again.length > 0) {
      const retried = await this.#startBackends(again);
      again.forEach((w, index) => (started[toStart.indexOf(w)] = retried[index]!));
    }
    toStart.forEach((w, index) => {
      const result = started[index]!;
      if (result.status === 'fulfilled') {
        next.set(w.key, result.value);
        this.#failed.delete(w.key);
        return;
      }
      const reason = loadFailureDetail((result.reason as Error).message);
      this.#remember(w, reason);
      failed.set(w.key, reason);
      const running = this.#backends.get(w.key);
      if (running) next.set(w.key, running);
      else quarantined.push(w);
    });
    for (const w of wanted) {
      if (next.has(w.key)) this.#running({ ...w, deployed: next.get(w.key)!.deployed });
    }
    for (const w of quarantined) {
      this.#status.set(w.key, { state: 'failed', version_id: w.deployed.version.id, ...this.#failureOf(w.key) });
    }
    const table: FrontRoutes = { routes: {}, quarantined: {} };
    for (const backend of next.values()) {
      const { script, subdomain } = backend.deployed;
      if (script.workers_dev) table.routes[`${script.name}.${subdomain}`] = `S${backend.slot}`;
      const routed = this.#routedKey(backend.deployed);
      if (routed) table.routes[routed] = `S${backend.slot}`;
    }
    for (const w of quarantined) {
      if (w.deployed.script.workers_dev) table.quarantined[`${w.deployed.script.name}.${w.deployed.subdomain}`] = true;
      const routed = this.#routedKey(w.deployed);
      if (routed) table.quarantined[routed] = true;
    }
    const retired = [...this.#backends].filter(([key, backend]) => next.get(key) !== backend).map(([, b]) => b);
    const front = this.#front;
    const declared = front && [...next.values()].every((b) => front.slots.has(b.slot));
    if (front && declared && !restartFront) {
      const changed = JSON.stringify(table) !== JSON.stringify(front.table);
      if (changed) writeFrontRoutes(front.routesDir, table);
      front.table = table;
      this.#backends = next;
      // Once the change answers, every router goes by the new table (and no request reaches a retired process).
      if (changed || retired.length > 0) await new Promise((r) => setTimeout(r, ROUTE_SETTLE_MS));
      await Promise.all(retired.map((b) => b.stop()));
      return;
    }
    // A new front: first start, coming from the direct mode, more slots than the front declares, or a crash.
    const slots = new Set([...next.values()].map((b) => b.slot));
    for (let slot = this.#nextSlot; slot < this.#nextSlot + SPARE_SLOTS; slot++) slots.add(slot);
    const routesDir = join(this.#deps.runtimeDir, `front-${++this.#fronts}`);
    writeFrontRoutes(routesDir, table);
    try {
      await this.#swapGroup(undefined, { slots, routesDir });
    } catch (error) {
      // The front runs no tenant code: this is the runtime's own failure. What started for it goes again.
      rmSync(routesDir, { recursive: true, force: true });
      await Promise.all([...next.values()].filter((b) => !this.#hasBackend(b)).map((b) => b.stop(1_000)));
      throw error;
    }
    const previousRoutes = front?.routesDir;
    this.#front = { slots, routesDir, table };
    this.#backends = next;
    // The previous front (or direct generation) has finished its requests by now (#swapGroup waited).
    await Promise.all(retired.map((b) => b.stop()));
    if (previousRoutes) rmSync(previousRoutes, { recursive: true, force: true });
  }

  /**
   * Stops a script's backend and starts its new configuration on the same slot; if that fails, the previous
   * configuration starts there again (its processes never overlap: see hostsDurableObjects).
   */
  async #replaceInPlace(w: Wanted): Promise<PromiseSettledResult<ScriptBackend>> {
    const running = this.#backends.get(w.key)!;
    const taken = await running.handOver();
    const [result] = await this.#startBackends([w], taken);
    if (result!.status === 'fulfilled') return result!;
    const previous = { key: w.key, deployed: running.deployed, fingerprint: running.fingerprint };
    const [again] = await this.#startBackends([previous], taken);
    if (again!.status === 'fulfilled') this.#backends.set(w.key, again!.value);
    else this.#backends.delete(w.key);
    return result!;
  }

  #hasBackend(backend: ScriptBackend): boolean {
    return [...this.#backends.values()].includes(backend);
  }

  /**
   * Starts one backend process per script, each on a new slot, in parallel and each on its own; or one on the
   * slot and sockets `taken` from its predecessor, which are left open (and `taken` updated) if it fails.
   */
  async #startBackends(wanted: Wanted[], taken?: HandedOver): Promise<PromiseSettledResult<ScriptBackend>[]> {
    if (wanted.length === 0) return [];
    const slots = wanted.map(() => taken?.slot ?? this.#nextSlot++);
    const paths = slots.map((slot) => this.#slotPath(slot));
    const sockets = taken
      ? [taken.socket, taken.spare]
      : await openUnixSockets([...paths, ...paths.map((path) => `${path}.spare`)]);
    return Promise.allSettled(
      wanted.map(async (w, index) => {
        const backend = new ScriptBackend({
          accountId: w.deployed.script.account_id,
          scriptName: w.deployed.script.name,
          fingerprint: w.fingerprint,
          deployed: w.deployed,
          slot: slots[index]!,
          socket: sockets[index]!,
          socketPath: paths[index]!,
          spare: sockets[paths.length + index]!,
          launch: (socket, beforeKill) => this.#launchBackend(w, socket, beforeKill),
          stopGraceMs: this.#clusterOf(w.deployed) && clusterStopGraceMs(this.#deps.objectsCluster!),
          logger: this.#deps.logger,
          clock: this.#deps.clock,
          onRestart: (reason) => this.#deps.metrics?.workerdRestarts.inc({ reason }),
        });
        try {
          await backend.start();
        } catch (error) {
          // Sockets handed over stay open for the next try on the same slot (#replaceInPlace).
          if (taken) Object.assign(taken, await backend.handOver());
          else await backend.stop(1_000);
          throw error;
        }
        return backend;
      }),
    );
  }

  /** One process of a script's backend: written config, started on the socket, ready, watched. */
  async #launchBackend(wanted: Wanted, socket: ListeningSocket, beforeKill: () => void): Promise<WorkerdProcess> {
    let entrypoints = wanted.deployed.entrypoints ?? [];
    for (;;) {
      try {
        return await this.#launchBackendServing(wanted, entrypoints, socket, beforeKill);
      } catch (error) {
        // A caller bound to an entrypoint this script does not export must not keep it from starting: it is
        // left out, and only that caller's calls fail (as they do on Cloudflare).
        const missing = missingEntrypoint((error as Error).message);
        if (missing === undefined || !entrypoints.includes(missing)) throw error;
        this.#deps.logger.warn('a service binding names an entrypoint its target does not export', {
          script: wanted.key,
          entrypoint: missing,
        });
        entrypoints = entrypoints.filter((e) => e !== missing);
      }
    }
  }

  async #launchBackendServing(
    wanted: Wanted,
    entrypoints: string[],
    socket: ListeningSocket,
    beforeKill: () => void,
  ): Promise<WorkerdProcess> {
    const dir = join(this.#deps.runtimeDir, `script-${randomUUID()}`);
    const { script } = wanted.deployed;
    const serviceSockets = entrypoints.map(() => join(this.#socketDir(), `entry-${++this.#entrySockets}.sock`));
    try {
      const process = new WorkerdProcess({
        configPath: this.#scriptConfig(dir, { ...wanted.deployed, entrypoints }, { serveEntrypoints: true }),
        // workerd's cluster mode is experimental.
        experimental: needsExperimental(wanted.deployed) || this.#clusterOf(wanted.deployed) !== undefined,
        sockets: [socket.handle],
        pingSocket: this.#pingSocketPath(),
        serviceSockets,
        ...this.#processOutput(wanted.key),
        readyTimeoutMs: this.#startTimeoutMs,
      });
      await process.ready;
      // Callers' bindings follow the target's current process: its sockets replace the previous one's.
      await exposeEntrypoints(
        process,
        entrypoints.map((entrypoint, index) => ({
          stable: serviceSocketPath(this.#socketDir(), script.account_id, script.name, entrypoint),
          socket: serviceSockets[index]!,
        })),
      ).catch(async (error: unknown) => {
        await process.stop(1_000);
        throw error;
      });
      this.#watch(process, limitsFor(wanted.deployed), { script: wanted.key }, beforeKill);
      return process;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * Starts the next generation on the functions port, running one script itself (`direct`) or the front,
   * and retires the current one. After a crash (a process of the current one died) the new generation joins
   * the same socket: connections queued there while fewer processes accepted are served, not dropped with a
   * closing socket, and the survivors serve until it is up.
   */
  async #swapGroup(direct: Wanted | undefined, front?: { slots: Set<number>; routesDir: string }): Promise<void> {
    if (!this.#ports.sockets || this.#stopped) return;
    const generation = ++this.#generation;
    const previous = this.#current;
    // A script hosting Durable Objects: one process (see #swapExclusive, which has stopped the previous one).
    const exclusive = direct !== undefined && hostsDurableObjects(direct.deployed);
    const sockets = await this.#ports.next(previous);
    // The config holds decrypted secrets: it lives on disk (0600) only until workerd has read it.
    const dir = join(this.#deps.runtimeDir, `gen-${generation}`);
    let next: WorkerdGroup;
    try {
      let configPath: string;
      let pingSockets: string[] | undefined;
      if (direct) {
        configPath = this.#scriptConfig(dir, direct.deployed, { httpSockets: exclusive ? sockets.length : 1 });
        pingSockets = (exclusive ? [0] : sockets).map(() => this.#pingSocketPath());
      } else {
        const slots = [...front!.slots].map((index) => ({ index, address: `unix:${this.#slotPath(index)}` }));
        configPath = writeConfig(
          dir,
          buildFrontConfig({ domain: this.#deps.config.functionsDomain, slots, routesDir: front!.routesDir }),
        );
      }
      next = new WorkerdGroup(
        sockets.map((socket) => socket.handle),
        {
          configPath,
          experimental: direct ? needsExperimental(direct.deployed) : false,
          pingSockets,
          oneProcess: exclusive,
          ...this.#processOutput(direct?.key ?? 'front'),
          readyTimeoutMs: this.#startTimeoutMs,
        },
      );
      await next.ready;
      if (direct)
        for (const process of next.processes) this.#watch(process, limitsFor(direct.deployed), { generation });
    } catch (error) {
      await this.#ports.abandon(sockets);
      throw error;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const oldFront = this.#front;
    this.#current = next;
    this.#direct = direct;
    if (direct) this.#front = undefined;
    void next.exited.then(({ process, code }) => this.#onExit(next, process, code));
    await this.#ports.handOver(previous, sockets);
    if (direct && oldFront) {
      // From front mode to one script: the backends and the old routes go once the front has finished.
      const backends = [...this.#backends.values()];
      this.#backends.clear();
      await Promise.all(backends.map((b) => b.stop()));
      rmSync(oldFront.routesDir, { recursive: true, force: true });
    }
  }

  /** A process on the functions port exited on its own: a new generation of the same kind replaces it. */
  #onExit(group: WorkerdGroup, process: WorkerdProcess, code: number | null): void {
    if (group.stopping || this.#stopped || this.#current !== group) return;
    const now = this.#deps.clock.now();
    this.#recentCrashes = [...this.#recentCrashes.filter((t) => now - t < 10_000), now];
    // Restart at once; only a crash loop backs off (up to 1 s) so it cannot spin a core.
    const delay = Math.min(1_000, (this.#recentCrashes.length - 1) * 200);
    const fields = { code, pid: process.child.pid, delay_ms: delay };
    this.#deps.metrics?.workerdRestarts.inc({ reason: process.limitExceeded ? 'limit' : 'crash' });
    if (process.limitExceeded) this.#deps.logger.info('restarting the functions processes after a limit kill', fields);
    else this.#deps.logger.error('workerd exited unexpectedly; restarting', fields);
    setTimeout(() => {
      this.#enqueue(true).catch((error: unknown) => this.#deps.logger.error('workerd restart failed', { err: error }));
    }, delay).unref();
  }

  #watch(
    process: WorkerdProcess,
    limits: ProcessLimits,
    label: Record<string, unknown>,
    beforeKill?: () => void,
  ): void {
    if (process.pingSocket)
      this.#watchdog.watch(process, { pingSocket: process.pingSocket, limits, label, beforeKill });
  }

  #processOutput(label: string) {
    return {
      onStdoutLine: (line: string, process: WorkerdProcess) => {
        if (this.#deps.traces.ingestLine(line, process)) return;
        if (!this.#deps.logs.ingestLine(line)) this.#deps.logger.info('workerd', { process: label, line });
      },
      onStderrLine: (line: string) =>
        isWorkerdNoise(line)
          ? this.#deps.logger.debug('workerd', { process: label, line })
          : this.#deps.logger.warn('workerd', { process: label, line }),
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

  /** A slot's socket: never reused while the runtime runs, so no router holds a stale connection to it. */
  #slotPath(slot: number): string {
    return join(this.#socketDir(), `slot-${slot}.sock`);
  }

  /**
   * The config of a process that runs one script (a backend, the direct generation, and the upload check),
   * written into `dir`, with the directories it needs (the script's tail flag directory) made.
   */
  /** The router key of a script a Workers route or Custom Domain names, if it is one. */
  #routedKey(deployed: ScriptToRun): string | undefined {
    const key = this.#deps.config.routeKey;
    return deployed.routed && key ? routedScriptKey(key, deployed.script.account_id, deployed.script.name) : undefined;
  }

  /** The script's workerd cluster on several nodes, when it hosts objects (only a backend process does). */
  #clusterOf(deployed: ScriptToRun): ClusterConfig | undefined {
    const settings = this.#deps.objectsCluster;
    return settings && hostsDurableObjects(deployed) ? scriptClusterConfig(settings, deployed) : undefined;
  }

  #scriptConfig(
    dir: string,
    script: ScriptToRun,
    options: { checkOnly?: boolean; serveEntrypoints?: boolean; httpSockets?: number } = {},
  ): string {
    const { checkOnly = false, serveEntrypoints = false, httpSockets } = options;
    return writeConfig(
      dir,
      buildFunctionsConfig({
        scripts: [script],
        r2: this.#deps.r2,
        engineSockets: this.#deps.engines,
        domain: this.#deps.config.functionsDomain,
        maxCompatibilityDate: this.#maxDate,
        tailFlagsDir: this.#deps.traces.flagsDir,
        egress: this.#deps.config.egress,
        mode: 'router',
        routeKey: this.#deps.config.routeKey,
        ping: true,
        subrequestsPerInvocation: this.#deps.subrequestsPerInvocation,
        durableObjectMaxBytes: this.#deps.durableObjectMaxBytes,
        // The upload check never touches the live objects' files (and never runs an alarm of theirs).
        durableObjectsDir: checkOnly ? undefined : this.#deps.durableObjectsDir,
        cluster: checkOnly ? undefined : this.#clusterOf(script),
        serviceSocket: (account, name, entrypoint) => serviceSocketPath(this.#socketDir(), account, name, entrypoint),
        serveEntrypoints,
        httpSockets,
      }),
    );
  }
}

/** The script hosts Durable Object classes: their objects must live in one process at a time. */
function hostsDurableObjects(script: ScriptToRun): boolean {
  // A Workflow's instances are Durable Objects too.
  return (script.durableObjects?.length ?? 0) > 0 || hostedWorkflows(script).length > 0;
}

type HandedOver = Awaited<ReturnType<ScriptBackend['handOver']>>;

/**
 * workerd's `assets` service, the queue relay's `service_binding_extra_handlers` flag and its bundled Workflows
 * engine are experimental: only the processes that serve assets, consume a queue or run Workflows run with
 * --experimental.
 */
function needsExperimental(script: ScriptToRun): boolean {
  return script.assets !== undefined || script.consumedQueues !== undefined || hostedWorkflows(script).length > 0;
}
