import { resolve } from 'node:path';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';
import type { AccountService } from '../accounts/index.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import { CronService } from './crons/cron-service.ts';
import { CronStore } from './crons/cron-store.ts';
import { scheduledTailEvent } from './crons/scheduled-tail-event.ts';
import {
  FunctionLogHub,
  FunctionMetricsCollector,
  FunctionsRuntime,
  invalidateEverywhere,
  TailTraces,
  WorkerdProcess,
  type FunctionsConfig,
  type R2ServiceResolver,
  type EngineSockets,
  type EnginesClusterSettings,
  type ScriptToRun,
  QUEUE_RELAY_ENTRYPOINT,
} from '../workerd/index.ts';
import { FunctionSamples } from './function-samples.ts';
import { RequestHistory } from './request-history.ts';
import { TailSessions } from './tail/sessions.ts';
import { TailRelay } from './tail/cluster-relay.ts';
import { SharedLogHistory } from './log-history.ts';
import { SqlLogHistoryStore } from './log-history-store.ts';
import {
  WorkersService,
  type BucketLookup,
  type DatabaseLookup,
  type FunctionRuntime,
  type KvNamespaceLookup,
  type QueueLookup,
} from './service.ts';
import type { Cluster } from '../cluster/index.ts';
import type { Clock } from '../shared/clock.ts';
import { SqlWorkerStore } from './store.ts';
import { workerRoutes } from './routes.ts';
import type { BlobStore } from '../storage/index.ts';
import { AssetsService } from './assets/service.ts';
import { DurableObjectsService } from './durable-objects/service.ts';
import { DurableObjectNamespaceStore } from './durable-objects/store.ts';
import type { ClusterObjects } from './durable-objects/cluster-objects.ts';
import { DurableObjectStorage } from './durable-objects/storage.ts';
import { SqlAssetStore } from './assets/asset-store.ts';
import { ServedAssets } from './assets/served-assets.ts';
import { mountAssetSessionRoutes, mountAssetSummaryRoute, mountAssetUploadRoute } from './assets/routes.ts';

export interface FunctionsPlatform {
  workers: WorkersService;
  runtime: FunctionsRuntime;
  logs: FunctionLogHub;
  /** Cron Triggers: schedules, their runs and the scheduler (a BackgroundService). */
  crons: CronService;
  traces: TailTraces;
  /** `wrangler tail` / `ledge tail` sessions; their WebSockets arrive as upgrades on the API listener. */
  tails: TailSessions;
  /** With several nodes: console lines kept in the database (stopped after the runtime: its last lines kept). */
  logHistory: SharedLogHistory | undefined;
  /** Requests and status classes per script over time (the dashboard's chart), sampled from the runtime. */
  requestHistory: RequestHistory;
}

/** The functions' tunables, as the server's settings give them (src/server/settings/schema.ts). */
export interface WorkersSettings {
  /** How long a script's process may take to load it (LEDGE_FUNCTIONS_START_TIMEOUT_MS). */
  startTimeoutMs: number;
  /** fetch() calls one invocation may make (LEDGE_SUBREQUESTS_PER_INVOCATION). */
  subrequestsPerInvocation: number;
  /** Storage one SQLite-backed Durable Object may use (LEDGE_DURABLE_OBJECT_MAX_BYTES). */
  durableObjectMaxBytes?: number | undefined;
  /** Workers one account may have (LEDGE_MAX_SCRIPTS_PER_ACCOUNT). */
  maxScriptsPerAccount: number;
  /** Largest script upload in bytes (LEDGE_SCRIPT_UPLOAD_LIMIT), at most WORKER_LIMITS.maxUploadBytes. */
  uploadLimit: number;
  /** How long a tail session lives (LEDGE_TAIL_SESSION_SECONDS). */
  tailSessionSeconds: number;
}

export interface WorkersSubsystem extends Subsystem {
  functions: FunctionsPlatform;
}

/**
 * Scripts, deployments, secrets, Cron Triggers, tails and the workerd supervisor (its background service),
 * composed from what the platform hands it; nothing starts until `runtime.start()`.
 */
export function createWorkersSubsystem(deps: {
  config: FunctionsConfig;
  settings: WorkersSettings;
  db: SqlDatabase;
  secretBox: SecretBox;
  accounts: AccountService;
  logger: Logger;
  /** `durableObjects`: their storage's root; without it, Durable Objects are refused. */
  paths: { runtime: string; logs: string; durableObjects?: string | undefined };
  buckets: BucketLookup;
  r2: R2ServiceResolver;
  /** The accounts' engine sockets, which KV and D1 bindings reach; without them, both bindings are refused. */
  engines?: EngineSockets | undefined;
  /** KV namespaces (src/kv), for the uploads' bindings. */
  kvNamespaces?: KvNamespaceLookup | undefined;
  /** D1 databases (src/d1), for the uploads' bindings: a binding reaches only its own account's. */
  databases?: DatabaseLookup | undefined;
  metrics?: LedgeMetrics | undefined;
  /** The other nodes on this database: a deploy, a secret or a schedule changed on one is served by all. */
  cluster?: Cluster | undefined;
  /** The platform's time: Cron Triggers, tail sessions, the runtime's restarts (tests pass a clock they advance). */
  clock: Clock;
  /** Where static assets keep their bytes (server/storage.ts openAssetBlobStore); without it, no assets. */
  assetBlobs?: BlobStore | undefined;
  /** Queues (src/queues), for the uploads' producer bindings. */
  queues?: QueueLookup | undefined;
  /**
   * The queue consumers by `account/script`, with the names of the queues each consumes by id: each serves the
   * queue relay (loaded even off workers.dev).
   */
  queueConsumers?: (() => Promise<ReadonlyMap<string, Record<string, string>>>) | undefined;
  /** Set on several nodes: scripts that host Durable Objects run in workerd's cluster mode (workerd/objects-cluster.ts). */
  objectsCluster?: EnginesClusterSettings | undefined;
  /** Set with objectsCluster: the objects of every node, read from the cluster store (for the objects list). */
  clusterObjects?: ClusterObjects | undefined;
  /** `account/script` of the scripts Workers routes and Custom Domains name (loaded even off workers.dev). */
  routedScripts?: (() => Promise<ReadonlySet<string>>) | undefined;
}): WorkersSubsystem {
  const { settings } = deps;
  const logs = new FunctionLogHub(
    deps.paths.logs,
    (error) => deps.logger.warn('function log lines could not be kept', { err: error }),
    deps.clock,
  );
  const cronStore = new CronStore(deps.db);
  const traces = new TailTraces(resolve(deps.paths.runtime), deps.clock);
  const tails = new TailSessions({ traces, ttlMs: settings.tailSessionSeconds * 1000 }, deps.clock);
  const assets = deps.assetBlobs
    ? new AssetsService({
        store: new SqlAssetStore(deps.db),
        blobs: deps.assetBlobs,
        tokenKey: deps.secretBox.deriveKey('worker assets upload tokens'),
        clock: deps.clock,
        directory: resolve(deps.paths.runtime, 'assets'),
      })
    : undefined;
  const servedAssets = assets && new ServedAssets(assets, deps.logger.child({ component: 'assets' }));
  // Objects keep their storage on this node's disk; on several nodes (objectsCluster) each script that hosts
  // them is a workerd cluster, whose objects have one owner across the nodes (docs/durable-objects.md).
  const objectsRoot = deps.paths.durableObjects && resolve(deps.paths.durableObjects);
  const durableObjects =
    objectsRoot !== undefined
      ? new DurableObjectsService(
          new DurableObjectNamespaceStore(deps.db),
          new DurableObjectStorage(objectsRoot),
          deps.clusterObjects,
        )
      : undefined;
  const runtime = new FunctionsRuntime({
    config: deps.config,
    runtimeDir: deps.paths.runtime,
    logger: deps.logger.child({ subsystem: 'functions' }),
    logs,
    traces,
    clock: deps.clock,
    r2: deps.r2,
    engines: deps.engines,
    deployed: async () => {
      const routed = (await deps.routedScripts?.()) ?? new Set<string>();
      const deployed = withQueueRelays(
        await workers.deployedScripts(await cronStore.scheduledScripts(), routed),
        (await deps.queueConsumers?.()) ?? new Map<string, Record<string, string>>(),
      );
      return servedAssets ? servedAssets.prepare(deployed) : deployed;
    },
    metrics: deps.metrics,
    startTimeoutMs: settings.startTimeoutMs,
    subrequestsPerInvocation: settings.subrequestsPerInvocation,
    durableObjectMaxBytes: settings.durableObjectMaxBytes,
    durableObjectsDir: objectsRoot,
    objectsCluster: deps.objectsCluster,
  });
  // Isolates' cached objects (isolate/r2-cache.ts) are dropped in every live process before a write to them is answered.
  deps.r2.onObjectsChanged?.((bucket, keys, lists) => invalidateEverywhere(WorkerdProcess.live, bucket, keys, lists));
  const samples = new FunctionSamples(deps.db, deps.clock);
  const collector = new FunctionMetricsCollector(
    deps.metrics,
    () => runtime.pingSockets(),
    (growth) => samples.add(growth),
  );
  deps.metrics?.registry.onCollect(() => collector.collect());
  const requestHistory = new RequestHistory(collector, samples);
  const cluster = deps.cluster;
  const sharedRuntime = cluster ? announcingReloads(runtime, cluster) : runtime;
  const workers: WorkersService = new WorkersService(
    {
      store: new SqlWorkerStore(deps.db, deps.secretBox, deps.clock),
      runtime: sharedRuntime,
      buckets: deps.buckets,
      databases: deps.databases,
      kvNamespaces: deps.kvNamespaces,
      queues: deps.queues,
      accounts: deps.accounts,
      maxScriptsPerAccount: settings.maxScriptsPerAccount,
      assets,
      durableObjects,
    },
    deps.clock,
  );
  const crons = new CronService({
    store: cronStore,
    requireScript: (accountId, name) => workers.requireScript(accountId, name),
    // A script that is not routed runs only while it has Cron Triggers: gaining or losing them reloads it.
    onScheduledChanged: async (accountId, name) => {
      const script = await workers.requireScript(accountId, name);
      if (script.current_deployment_id && !script.workers_dev) await sharedRuntime.reload();
    },
    runtime,
    logs,
    logger: deps.logger.child({ subsystem: 'crons' }),
    metrics: deps.metrics,
    onSchedulesChanged: () => cluster?.announce(CRONS_TOPIC, '*'),
    clock: deps.clock,
  });
  // Cron Trigger runs reach the script's open tail sessions as scheduled events.
  tailCronRuns(crons, traces);
  // What a deleted script leaves outside the database: open tails, its log file, its timers in the scheduler.
  workers.onScriptDeleted(async (accountId, name) => {
    tails.closeScript(accountId, name);
    await requestHistory.forget(accountId, name);
    await logs.forget(accountId, name);
    await crons.reschedule();
    // What only the deleted script named is freed once no upload session can count on it any more.
    await assets?.collect();
  });
  let logHistory: SharedLogHistory | undefined;
  if (cluster) {
    // Once this node has reloaded for a class or a Worker deleted on another, its copies of their objects go too.
    const reload = coalescedReload(runtime, deps.logger, () => durableObjects?.sweepNode());
    cluster.onRemote(RUNTIME_TOPIC, () => {
      reload();
      // A deleted script takes its schedules with it.
      void crons.reschedule().catch(() => undefined);
    });
    cluster.onRemote(CRONS_TOPIC, () => void crons.reschedule().catch(() => undefined));
    new TailRelay({ cluster, traces, logs, logger: deps.logger.child({ component: 'tail-relay' }) }, deps.clock);
    logHistory = new SharedLogHistory(
      {
        store: new SqlLogHistoryStore(deps.db),
        logger: deps.logger.child({ component: 'function-logs' }),
        gate: (job, ttlMs) => cluster.mayRun(job, ttlMs),
      },
      deps.clock,
    );
    logs.shareHistory(logHistory);
  }
  const functions: FunctionsPlatform = { workers, runtime, logs, crons, traces, tails, logHistory, requestHistory };
  return {
    name: 'workers',
    functions,
    // Started after the R2 wire backend (bindings reach it) and stopped before it: see platform.ts.
    // Cron Triggers run scheduled() handlers in the runtime: started after it, stopped before it.
    // Kept log lines are written last, once the runtime that prints them has stopped.
    // The request samples stop before the runtime, so their last scrape still finds the processes.
    // Once the runtime has loaded what is deployed, this node's copies of objects that no class owns any more go
    // (a class or a Worker deleted while this node was down).
    background: [
      logs,
      ...(logHistory ? [logHistory] : []),
      runtime,
      ...(durableObjects ? [objectsSweepAtStart(durableObjects, deps.logger)] : []),
      requestHistory,
      crons,
    ],
    mountRoutes: (api) => {
      if (assets) mountAssetSessionRoutes(api, assets);
      mountAssetSummaryRoute(api, workers);
      api.route('/', workerRoutes(workers, logs, { uploadLimit: settings.uploadLimit, crons, tails, requestHistory }));
    },
    mountTokenRoutes: (api) => {
      if (assets) mountAssetUploadRoute(api, assets);
    },
  };
}

const RUNTIME_TOPIC = 'workers_runtime';

/**
 * The sweep runs beside serving, not before it: start-up does not wait for a walk of every account's files.
 * Stopping waits for it, so it never reads a database or directory that shutdown is closing.
 */
function objectsSweepAtStart(durableObjects: DurableObjectsService, logger: Logger): BackgroundService {
  let running: Promise<void> = Promise.resolve();
  const start = () => {
    running = durableObjects
      .sweepNode()
      .catch((error: unknown) => logger.warn("sweeping this node's Durable Object copies failed", { err: error }));
  };
  return { name: 'durable-objects-sweep', start, stop: () => running };
}

/** Cron Trigger runs (on schedule or triggered) reach the script's open tail sessions as scheduled events. */
export function tailCronRuns(crons: CronService, traces: TailTraces): () => void {
  return crons.onRun((run, result) => traces.publish(run.account_id, run.script_name, scheduledTailEvent(run, result)));
}
const CRONS_TOPIC = 'workers_crons';

/**
 * The runtime as the service sees it, telling the other nodes to reload too whenever it reloads here: every
 * reload follows a committed change of what workerd serves (a deployment, a secret, a route, a deleted script).
 */
function announcingReloads(runtime: FunctionsRuntime, cluster: Cluster): FunctionRuntime {
  return {
    check: (candidate) => runtime.check(candidate),
    functionUrl: (script, subdomain) => runtime.functionUrl(script, subdomain),
    status: (accountId) => runtime.status(accountId),
    reload: () => {
      cluster.announce(RUNTIME_TOPIC, '*');
      return runtime.reload();
    },
  };
}

/**
 * Reloads for other nodes' changes, a burst of them costing at most two swaps: a change that arrives while a
 * reload is queued or running asks for one more after it (the running one may have read the database before
 * that change committed). `afterwards` runs after each reload that succeeded.
 */
function coalescedReload(
  runtime: FunctionsRuntime,
  logger: Logger,
  afterwards: () => Promise<void> | undefined,
): () => void {
  let busy = false;
  let again = false;
  const run = (): void => {
    busy = true;
    again = false;
    runtime
      .reload()
      .then(afterwards)
      .catch((error: unknown) => logger.error("reload for another node's change failed", { err: error }))
      .finally(() => {
        busy = false;
        if (again) run();
      });
  };
  return () => {
    if (busy) again = true;
    else run();
  };
}

/** Queue consumers serve the relay their queue engine delivers batches through (workerd/config/queue-relay.ts). */
function withQueueRelays<T extends ScriptToRun>(
  deployed: T[],
  consumers: ReadonlyMap<string, Record<string, string>>,
): T[] {
  if (consumers.size === 0) return deployed;
  return deployed.map((d) => {
    const consumedQueues = consumers.get(`${d.script.account_id}/${d.script.name}`);
    return consumedQueues
      ? { ...d, entrypoints: [...(d.entrypoints ?? []), QUEUE_RELAY_ENTRYPOINT], consumedQueues }
      : d;
  });
}
