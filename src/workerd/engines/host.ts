import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock, type ClockTimer } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BuiltConfig } from '../config/built.ts';
import { writeConfig } from '../config/write.ts';
import type { Service, Socket } from '../config/types.ts';
import { WorkerdProcess } from '../workerd-process.ts';

/** Where one account's engines keep their data and listen. */
export interface EnginePaths {
  /** The account's engine data (`<data>/engines/<account>/<kind>` is the kind's). */
  dataDir: string;
  /** The account's sockets: short, as a unix socket path has at most 107 bytes. */
  socketDir: string;
}

/** One kind of engine (D1, KV...): the config it adds to an account's engine process. Pure. */
export interface EngineKind {
  name: string;
  /** Accounts that have something of this kind (their engines start with the server). */
  accounts(): Promise<string[]>;
  /** The kind's services and sockets for one account, or nothing when the account has none of it. */
  build(
    accountId: string,
    paths: EnginePaths,
  ): Promise<{ services: Service[]; sockets: Socket[]; directories: string[] }>;
}

/** How long a crashed engine process waits before it is started again: longer while it keeps crashing. */
const RESTART_DELAYS_MS = [1_000, 2_000, 5_000, 15_000, 30_000];
/** A process that ran this long before it exited starts the delays over. */
const STABLE_MS = 60_000;
/**
 * The process's readiness socket answers with this worker. WorkerdProcess waits for a socket named "http": it is
 * the config's last, so the engines' sockets, bound before it, take connections once the process is ready.
 */
const READY_SERVICE: Service = {
  name: 'ready',
  worker: {
    modules: [
      { name: 'ready.js', esModule: 'export default { fetch() { return new Response(null, { status: 204 }); } };' },
    ],
    compatibilityDate: '2025-01-01',
  },
};

interface Running {
  process: WorkerdProcess;
  /** The config it runs, as text: a reload that builds the same text restarts nothing. */
  config: string;
  /** When it started (the clock's monotonic time). */
  startedAt: number;
}

/**
 * Each account's engine process: one workerd running the bundled engines (workerd's d1.js...) of that account
 * only, so one account's data, load and crashes stay in its own process. Its config is built from the engine
 * kinds (pure builders); a change of what the account has (a database created or deleted) rebuilds it and, when
 * it differs, replaces the process (a socket cannot be added to a running workerd). A process that exits on
 * its own is started again after a second, later while it keeps exiting. Calls for one account are serialised.
 */
export class EngineHost {
  readonly #runtimeDir: string;
  readonly #dataDir: string;
  readonly #kinds: readonly EngineKind[];
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #readyTimeoutMs: number;
  readonly #running = new Map<string, Running>();
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #restarts = new Map<string, ClockTimer>();
  /** Exits in a row of each account's process, each within STABLE_MS of its start. */
  readonly #crashes = new Map<string, number>();
  #stopped = false;
  readonly name = 'engine-host';

  constructor(deps: {
    /** `<data>/runtime`: configs and sockets (private). */
    runtimeDir: string;
    /** `<data>/engines`: the engines' data, per account. */
    dataDir: string;
    kinds: readonly EngineKind[];
    logger: Logger;
    clock?: Clock | undefined;
    readyTimeoutMs?: number | undefined;
  }) {
    this.#runtimeDir = join(deps.runtimeDir, 'engines');
    this.#dataDir = deps.dataDir;
    this.#kinds = deps.kinds;
    this.#logger = deps.logger;
    this.#clock = deps.clock ?? systemClock;
    this.#readyTimeoutMs = deps.readyTimeoutMs ?? 15_000;
  }

  /** The account's paths (the socket directory is named by a hash of the account's id, to stay short). */
  paths(accountId: string): EnginePaths {
    const short = createHash('sha256').update(accountId).digest('hex').slice(0, 12);
    return { dataDir: join(this.#dataDir, accountId), socketDir: join(this.#runtimeDir, short) };
  }

  /** Starts the engines of every account that has something (the server's start). */
  async start(): Promise<void> {
    const accounts = new Set((await Promise.all(this.#kinds.map((kind) => kind.accounts()))).flat());
    await Promise.all([...accounts].map((account) => this.ensure(account)));
  }

  /** Resolves once the account's engine process runs (started if it was not). */
  ensure(accountId: string): Promise<void> {
    // A process that is starting is waited for: its sockets take connections once it is ready.
    const running = this.#running.get(accountId);
    if (running?.process.running) return running.process.ready.then(() => undefined);
    return this.#serial(accountId, () => this.#apply(accountId, false));
  }

  /** Rebuilds the account's config after a change of what it has, and replaces its process if it differs. */
  reload(accountId: string): Promise<void> {
    return this.#serial(accountId, () => this.#apply(accountId, true));
  }

  /** The account's engine process id, while one runs (operators' tools and tests). */
  pid(accountId: string): number | undefined {
    const running = this.#running.get(accountId);
    return running?.process.running ? running.process.child.pid : undefined;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#restarts.values()) timer.cancel();
    this.#restarts.clear();
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.all(running.map((r) => r.process.stop()));
  }

  #serial(accountId: string, work: () => Promise<void>): Promise<void> {
    const previous = this.#queues.get(accountId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.#queues.set(accountId, next);
    void next
      .finally(() => {
        if (this.#queues.get(accountId) === next) this.#queues.delete(accountId);
      })
      .catch(() => undefined);
    return next;
  }

  async #apply(accountId: string, rebuild: boolean): Promise<void> {
    if (this.#stopped) throw new Error('the engine host has stopped');
    const current = this.#running.get(accountId);
    if (current?.process.running && !rebuild) {
      await current.process.ready;
      return;
    }
    const paths = this.paths(accountId);
    const built = await this.#build(accountId, paths);
    const text = JSON.stringify(built.config);
    if (current?.process.running && current.config === text) return;
    // The old process lets go of its sockets before the new one binds them.
    if (current) {
      this.#running.delete(accountId);
      await current.process.stop();
    }
    // Only the readiness socket: nothing to serve.
    if (built.config.sockets!.length === 1) return;
    mkdirSync(paths.socketDir, { recursive: true, mode: 0o700 });
    for (const stale of readdirSync(paths.socketDir)) rmSync(join(paths.socketDir, stale), { force: true });
    const configPath = writeConfig(`${paths.socketDir}.config`, built);
    const logger = this.#logger.child({ engine: accountId });
    const process = new WorkerdProcess({
      configPath,
      experimental: true,
      onStdoutLine: (line) => logger.debug(line),
      onStderrLine: (line) => logger.warn(line),
      readyTimeoutMs: this.#readyTimeoutMs,
    });
    const running = { process, config: text, startedAt: this.#clock.monotonic() };
    this.#running.set(accountId, running);
    void process.exited.then((code) => this.#exited(accountId, running, code));
    await process.ready;
    await this.#listening(process, built);
  }

  /**
   * Resolves once every unix socket of the config exists: workerd reports only the readiness socket's listen,
   * and a caller that connects to an engine socket not bound yet would get ENOENT.
   */
  async #listening(process: WorkerdProcess, built: BuiltConfig): Promise<void> {
    const paths = (built.config.sockets ?? [])
      .map((socket) => socket.address)
      .filter((address): address is string => address?.startsWith('unix:') === true)
      .map((address) => address.slice('unix:'.length));
    for (let waited = 0; !paths.every((path) => existsSync(path)); waited += 10) {
      if (!process.running) throw new Error(process.errorText() || 'the engine process exited while it started');
      if (waited > this.#readyTimeoutMs) throw new Error('the engine process did not bind its sockets');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async #build(accountId: string, paths: EnginePaths): Promise<BuiltConfig> {
    const parts = await Promise.all(this.#kinds.map((kind) => kind.build(accountId, paths)));
    const ready: Socket = {
      name: 'http',
      address: `unix:${join(paths.socketDir, 'ready.sock')}`,
      http: {},
      service: 'ready',
    };
    return {
      config: {
        services: [READY_SERVICE, ...parts.flatMap((p) => p.services)],
        sockets: [...parts.flatMap((p) => p.sockets), ready],
      },
      files: [],
      directories: parts.flatMap((p) => p.directories),
    };
  }

  #exited(accountId: string, running: Running, code: number | null): void {
    if (this.#stopped || running.process.stopping || this.#running.get(accountId) !== running) return;
    this.#running.delete(accountId);
    const stable = this.#clock.monotonic() - running.startedAt > STABLE_MS;
    const crashes = stable ? 0 : (this.#crashes.get(accountId) ?? 0);
    this.#crashes.set(accountId, crashes + 1);
    const delay = RESTART_DELAYS_MS[Math.min(crashes, RESTART_DELAYS_MS.length - 1)]!;
    this.#logger.warn('an engine process exited; starting it again', {
      account: accountId,
      code,
      delay_ms: delay,
      stderr: running.process.errorText(),
    });
    this.#restarts.get(accountId)?.cancel();
    this.#restarts.set(
      accountId,
      this.#clock.schedule(delay, () => {
        this.#restarts.delete(accountId);
        this.ensure(accountId).catch((error: unknown) =>
          this.#logger.error('an engine process did not start again', { account: accountId, err: error }),
        );
      }),
    );
  }
}
