import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { EngineHost, queuesEngine, type EngineConsumer, type EnginesClusterSettings } from '../workerd/index.ts';
import { QueueEngineClient } from './engine-client.ts';
import { QueueErrors } from './errors.ts';
import { queueRoutes } from './routes.ts';
import type { ConsumerRecord } from './schemas.ts';
import { QueueService, type QueueHooks, type QueueLimits } from './service.ts';
import { SqlQueueStore } from './store.ts';

export interface QueuesSubsystem extends Subsystem {
  service: QueueService;
  store: SqlQueueStore;
  /** Each account's queue engine (its own workerd process: a consumer change restarts it, not KV's or D1's). */
  engines: EngineHost;
  /** Every consumer script by `account/script`, with the names of the queues it consumes by id. */
  consumerScripts(): Promise<ReadonlyMap<string, Record<string, string>>>;
}

/**
 * Queues: records and the v4 API here, messages in each account's queue engine, workerd's queues.js
 * (workerd/config/engines/queues.ts), in a process of its own per account. Its consumers are the engine's
 * config: each change rebuilds it and restarts that account's engine (messages stay on disk; a delivery
 * in flight counts as a failed attempt and is delivered again).
 */
export function createQueuesSubsystem(deps: {
  db: SqlDatabase;
  /** `<data>/runtime/queues` (sockets and configs) and `<data>/engines` (each account's `queues/` folder). */
  runtimeDir: string;
  dataDir: string;
  logger: Logger;
  clock: Clock;
  limits?: Partial<QueueLimits> | undefined;
  /**
   * Set on several nodes: each account's queue engine is one instance of a workerd cluster (its place in the
   * cluster store: `engines/<account>/queues/`), so each queue's shard runs on one node at a time.
   */
  workerdCluster?: EnginesClusterSettings | undefined;
  /** The other nodes: a queue or consumer change made on one rebuilds every node's engine (their configs must match). */
  nodes?:
    | { announce(topic: string, key: string): void; onRemote(topic: string, listener: (key: string) => void): unknown }
    | undefined;
  /** Where a consumer script's process serves the queue relay (a stable path, whether it runs yet or not). */
  consumerSocket: (accountId: string, script: string) => string;
  /** The runtime loads consumer scripts with their relay: called once consumers change, before the engine. */
  reloadFunctions: () => Promise<void>;
  scriptExists: QueueHooks['scriptExists'];
  producers: QueueHooks['producers'];
}): QueuesSubsystem {
  const clock = deps.clock;
  const store = new SqlQueueStore(deps.db);
  // The engine's config is built synchronously when its process starts: the consumers are kept here.
  const consumers = new Map<string, EngineConsumer[]>();
  const delays = new Map<string, Record<string, number>>();
  const refresh = async (accountId: string): Promise<void> => {
    const queues = await store.list(accountId, []);
    const idOf = new Map(queues.map((queue) => [queue.queue_name, queue.queue_id]));
    // A paused queue takes messages and keeps them: the engine runs without its consumer until it resumes.
    const paused = new Set(queues.filter((queue) => queue.delivery_paused === 1).map((queue) => queue.queue_id));
    const records = (await store.consumers(accountId)).filter((record) => !paused.has(record.queue_id));
    consumers.set(
      accountId,
      records.map((record) => engineConsumer(record, idOf, deps.consumerSocket(accountId, record.script_name))),
    );
    delays.set(
      accountId,
      Object.fromEntries(
        queues.filter((queue) => queue.delivery_delay > 0).map((queue) => [queue.queue_id, queue.delivery_delay]),
      ),
    );
  };
  const cluster = deps.workerdCluster;
  const engines = new EngineHost({
    // Apart from the account's KV and D1 engines' cluster (another process): a cluster of its own below theirs.
    cluster: cluster && {
      ...cluster,
      bucketFor: (accountId) => {
        const place = cluster.bucketFor(accountId);
        return { ...place, bucket: `${place.bucket}/queues` };
      },
    },
    runtimeDir: deps.runtimeDir,
    dataDir: deps.dataDir,
    kinds: [
      queuesEngine((accountId) => ({
        consumers: consumers.get(accountId) ?? [],
        delays: delays.get(accountId) ?? {},
      })),
    ],
    logger: deps.logger.child({ component: 'queue-engines' }),
    clock,
    accounts: async () => {
      const accounts = await store.accounts();
      await Promise.all(accounts.map(refresh));
      return accounts;
    },
  });
  const engine = new QueueEngineClient(engines);
  // A shard that got messages while its queue had no consumer (or another config) set its alarm for the
  // retention sweep only, days away, and the engine's new config reaches it only when it is next called: each
  // consumed queue is called (its metrics) once the engine runs with its consumer.
  const wake = async (accountId: string): Promise<void> => {
    for (const consumer of consumers.get(accountId) ?? []) {
      await engine.metrics(accountId, consumer.queueId).catch((error: unknown) => {
        deps.logger.warn('a consumed queue could not be woken', { account: accountId, err: error });
      });
    }
  };
  const waker: BackgroundService = {
    name: 'queue-waker',
    start: async () => {
      await Promise.all([...consumers.keys()].map(wake));
    },
    stop: () => undefined,
  };
  const unavailable = (error: unknown) => {
    deps.logger.warn('a queue engine did not start', { err: error });
    throw QueueErrors.unavailable('the queue engine did not start; try again shortly');
  };
  const rebuild = async (accountId: string): Promise<void> => {
    await refresh(accountId);
    await engines.restart(accountId).catch(unavailable);
    await wake(accountId);
  };
  const hooks: QueueHooks = {
    created: async (accountId) => {
      await engines.ensure(accountId).catch(unavailable);
      deps.nodes?.announce(QUEUES_TOPIC, JSON.stringify(['created', accountId]));
    },
    consumersChanged: async (accountId) => {
      await refresh(accountId);
      await deps.reloadFunctions();
      await engines.restart(accountId).catch(unavailable);
      await wake(accountId);
      deps.nodes?.announce(QUEUES_TOPIC, JSON.stringify(['changed', accountId]));
    },
    scriptExists: deps.scriptExists,
    producers: deps.producers,
  };
  // Another node's change: this node's engine for the account starts, or starts again on the new config (the
  // runtime's own reload comes from the runtime's announcement).
  deps.nodes?.onRemote(QUEUES_TOPIC, (key) => {
    const [kind, accountId] = JSON.parse(key) as [string, string];
    const done = kind === 'created' ? refresh(accountId).then(() => engines.ensure(accountId)) : rebuild(accountId);
    done.catch((error: unknown) =>
      deps.logger.warn('a queue engine did not follow a change', { account: accountId, err: error }),
    );
  });
  const service = new QueueService({ store, engine, hooks, limits: deps.limits, clock });
  const closer: BackgroundService = { name: 'queue-engine-client', start: () => undefined, stop: () => engine.close() };
  return {
    name: 'queues',
    service,
    store,
    engines,
    consumerScripts: async () => {
      const scripts = new Map<string, Record<string, string>>();
      for (const consumer of await store.allConsumers()) {
        const key = `${consumer.account_id}/${consumer.script_name}`;
        scripts.set(key, { ...scripts.get(key), [consumer.queue_id]: consumer.queue_name });
      }
      return scripts;
    },
    background: [engines, waker, closer],
    mountRoutes: (api) => api.route('/', queueRoutes(service)),
  };
}

/** Announced when a queue or its consumers change on one node: the others' engines follow. */
const QUEUES_TOPIC = 'queue_engines';

/** A consumer record as the engine's CONSUMERS entry takes it (seconds where the API says milliseconds). */
function engineConsumer(record: ConsumerRecord, idOf: Map<string, string>, socket: string): EngineConsumer {
  return {
    queueId: record.queue_id,
    script: record.script_name,
    socket,
    maxBatchSize: record.batch_size,
    maxBatchTimeout: record.max_wait_time_ms / 1000,
    maxRetries: record.max_retries,
    retryDelay: record.retry_delay,
    maxConcurrency: record.max_concurrency ?? 0,
    deadLetterQueue: record.dead_letter_queue === null ? undefined : idOf.get(record.dead_letter_queue),
  };
}
