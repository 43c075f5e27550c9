import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock, ClockTimer } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { buildEnginesConfig } from './config/engines-config.ts';
import { engineSocketPath, type EngineKind } from './config/engines/index.ts';
import { writeConfig } from './config/write.ts';
import { isWorkerdNoise } from './workerd-noise.ts';
import { WorkerdProcess } from './workerd-process.ts';

export interface EngineHostDeps {
  /** `<data>/runtime`: sockets and configs, `engines/<short account hash>/`. */
  runtimeDir: string;
  /** `<data>/engines`: each account's engine data, `<account>/<kind>/`. */
  dataDir: string;
  /** The engine kinds every account's process runs (config/engines/index.ts engineKinds). */
  kinds: readonly EngineKind[];
  logger: Logger;
  /** Restart delays and how long a process ran are measured on it. */
  clock: Clock;
  /** The accounts that have any namespace or database: their processes start with the host. */
  accounts: () => Promise<string[]>;
  readyTimeoutMs?: number | undefined;
  /** Set on several nodes: each account's process is then one instance of the account's workerd cluster. */
  cluster?: EnginesClusterSettings | undefined;
}

/**
 * How an account's engines process joins its workerd cluster (`Config.cluster`): every node runs the same
 * config for the account, and the instances agree through the account's own place in a shared bucket on which
 * of them owns each namespace's and database's Durable Object.
 */
export interface EnginesClusterSettings {
  /** The account's place in the cluster bucket (`s3://<bucket>/<prefix>`) and its S3 settings (`aws_*=`). */
  bucketFor(accountId: string): { bucket: string; bucketOptions: string[] };
  /** The cluster's shared secret (at least 32 bytes), the same on every node. */
  key: string;
  /** The address other nodes reach this node's instances at (a private one); each instance gets a port of its own. */
  host: string;
  /** From SIGTERM to exit: the time an instance has to hand its objects to its peers. */
  stopTimeoutMs: number;
  /** Tests only: shortens the leases and the waits of a takeover (workerd's `unsafeTimeDivisor`). */
  timeDivisor?: number | undefined;
}

/** Account ids name directories: Ledge's own ids, hex, nothing a path could escape with. */
const ACCOUNT_ID = /^[0-9a-f]{32}$/;
/** Longest unix socket path Linux takes (sun_path is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;
/** Restart delays after a crash: a process that keeps dying is retried less often, up to the last. */
const RESTART_DELAYS_MS = [100, 500, 2_000, 10_000, 30_000];
/** A process that ran this long before it died starts the delays over. */
const STABLE_MS = 60_000;

interface AccountEngines {
  process: WorkerdProcess | undefined;
  /** Settles once the process listens on every engine socket. */
  ready: Promise<void>;
  crashes: number;
  timer: ClockTimer | undefined;
}

/**
 * The data engines' host: one workerd process per account that has KV namespaces or D1 databases, running
 * workerd's own bundled engines (config/engines-config.ts, one unix socket per engine kind) on the account's
 * disk. Its sockets are the only way to the account's data: the account's scripts reach them through external
 * services that inject the namespace's or database's id as a header, the API server through engine clients
 * that send the same header. Creating a namespace or a database changes nothing here (the process's config
 * names kinds, not ids): the process starts when its account first has one, and no create or delete restarts
 * it. An account's engines fail alone: a process that dies is restarted (with growing delays while it keeps
 * dying), and no other account's process notices. It runs no tenant code, so the functions' watchdog (CPU per
 * invocation, isolate memory) does not apply to it.
 */
export class EngineHost implements BackgroundService {
  readonly name = 'engine-host';
  readonly #deps: EngineHostDeps;
  readonly #accounts = new Map<string, AccountEngines>();
  #stopped = false;

  constructor(deps: EngineHostDeps) {
    this.#deps = deps;
  }

  /** Where an engine kind of an account listens (whether or not its process runs yet). */
  socketPath(kind: string, accountId: string): string {
    return engineSocketPath(this.#socketDir(accountId), kind);
  }

  /** The account's engines process id, while it runs (tests kill it to see it come back). */
  pid(accountId: string): number | undefined {
    const process = this.#accounts.get(accountId)?.process;
    return process?.running ? process.child.pid : undefined;
  }

  async start(): Promise<void> {
    const accounts = await this.#deps.accounts();
    await Promise.all(accounts.map((account) => this.ensure(account)));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const all = [...this.#accounts.values()];
    this.#accounts.clear();
    for (const engines of all) engines.timer?.cancel();
    await Promise.all(all.map((engines) => engines.process?.stop(this.#graceMs())));
  }

  /** Starts the account's engines unless they run; resolves once they listen. */
  ensure(accountId: string): Promise<void> {
    if (!ACCOUNT_ID.test(accountId)) return Promise.reject(new Error(`not an account id: ${accountId}`));
    // A call during shutdown must not start a process nothing would stop.
    if (this.#stopped) return Promise.reject(new Error('the engine host has stopped'));
    const longest = Math.max(
      ...this.#deps.kinds.map((kind) => Buffer.byteLength(this.socketPath(kind.name, accountId))),
    );
    if (longest > MAX_SOCKET_PATH_BYTES) {
      return Promise.reject(
        new Error(
          `the data dir's path is too long for the engines' unix sockets (${longest} bytes, at most ${MAX_SOCKET_PATH_BYTES}): use a shorter --data-dir`,
        ),
      );
    }
    const known = this.#accounts.get(accountId);
    if (known) return known.ready;
    const engines: AccountEngines = {
      process: undefined,
      ready: Promise.resolve(),
      crashes: 0,
      timer: undefined,
    };
    this.#accounts.set(accountId, engines);
    engines.ready = this.#run(accountId, engines);
    return engines.ready;
  }

  /**
   * Starts the account's engines again on a config built anew, for a kind whose config depends on the
   * account's records (the queue consumers); what the engines keep on disk stays.
   */
  async restart(accountId: string): Promise<void> {
    const known = this.#accounts.get(accountId);
    if (known) {
      this.#accounts.delete(accountId);
      known.timer?.cancel();
      await known.process?.stop(this.#graceMs());
    }
    return this.ensure(accountId);
  }

  /** An instance of a cluster hands its objects to its peers before it exits: it has its stop timeout for that. */
  #graceMs(): number {
    return this.#deps.cluster ? this.#deps.cluster.stopTimeoutMs + 2_000 : 2_000;
  }

  /** Named by a hash of the account's id: a unix socket path has at most 107 bytes. */
  #socketDir(accountId: string): string {
    const short = createHash('sha256').update(accountId).digest('hex').slice(0, 12);
    return join(this.#deps.runtimeDir, 'engines', short);
  }

  async #run(accountId: string, engines: AccountEngines): Promise<void> {
    const socketDir = this.#socketDir(accountId);
    const cluster = this.#deps.cluster;
    // workerd refuses a disk that holds objects from before cluster mode: a clustered instance keeps its copy of
    // the account's objects in a folder of its own (the bucket's copy is the truth; one node's data is not imported).
    const dataDir = join(this.#deps.dataDir, accountId, ...(cluster ? ['cluster'] : []));
    const built = buildEnginesConfig(
      { accountId, dataDir, socketDir },
      this.#deps.kinds,
      cluster && {
        ...cluster.bucketFor(accountId),
        address: `${cluster.host}:0`,
        key: cluster.key,
        stopTimeoutMs: cluster.stopTimeoutMs,
        ...(cluster.timeDivisor ? { unsafeTimeDivisor: cluster.timeDivisor } : {}),
      },
    );
    // A socket file left by a process that died would make workerd's listen fail.
    rmSync(socketDir, { recursive: true, force: true });
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    const configPath = writeConfig(join(socketDir, 'config'), built);
    const { clock, logger } = this.#deps;
    const started = clock.monotonic();
    const process = new WorkerdProcess({
      configPath,
      experimental: true,
      readySockets: this.#deps.kinds.map((kind) => kind.name),
      readyTimeoutMs: this.#deps.readyTimeoutMs ?? 15_000,
      onStdoutLine: (line) => logger.info('engine output', { account: accountId, line }),
      onStderrLine: (line) => {
        if (!isWorkerdNoise(line)) logger.warn('engine error', { account: accountId, line });
      },
    });
    engines.process = process;
    void process.exited.then((code) => {
      if (this.#stopped || process.stopping || this.#accounts.get(accountId) !== engines) return;
      if (clock.monotonic() - started > STABLE_MS) engines.crashes = 0;
      const delay = RESTART_DELAYS_MS[Math.min(engines.crashes, RESTART_DELAYS_MS.length - 1)]!;
      engines.crashes++;
      logger.warn('an account engines process exited; restarting it', {
        account: accountId,
        code,
        delay_ms: delay,
        stderr: process.errorText(),
      });
      engines.timer = clock.schedule(delay, () => {
        engines.timer = undefined;
        if (this.#stopped || this.#accounts.get(accountId) !== engines) return;
        engines.ready = this.#run(accountId, engines);
        engines.ready.catch((error: unknown) =>
          logger.error('an account engines process did not start again', { account: accountId, err: error }),
        );
      });
    });
    await process.ready;
  }
}
