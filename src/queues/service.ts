import { randomBytes } from 'node:crypto';
import type { Clock } from '../shared/clock.ts';
import { isoNow } from '../shared/time.ts';
import type { QueueEngineClient } from './engine-client.ts';
import { QueueErrors } from './errors.ts';
import {
  DEFAULT_RETENTION_SECONDS,
  QUEUE_ID,
  QUEUE_NAME,
  type ConsumerBody,
  type ConsumerRecord,
  type QueueMetrics,
  type QueueRecord,
  type QueueUpdate,
} from './schemas.ts';
import type { SqlQueueStore } from './store.ts';

/** Cloudflare's limit on the Workers Paid plan: 10,000 queues per account. */
export const DEFAULT_QUEUE_LIMITS = { maxQueuesPerAccount: 10_000 } as const;

export interface QueueLimits {
  maxQueuesPerAccount: number;
}

/** Production's consumer defaults (queues.js applies the same when a setting is absent). */
const CONSUMER_DEFAULTS = { batch_size: 10, max_retries: 3, max_wait_time_ms: 5_000, retry_delay: 0 } as const;

/** What the rest of the platform is told of, and asked. */
export interface QueueHooks {
  /** A queue exists in the account: its queue engine must run (producers reach it at once). */
  created(accountId: string): Promise<void>;
  /**
   * The account's consumers, or a queue's delay or pause, changed: its queue engine and the consumer scripts'
   * processes follow.
   */
  consumersChanged(accountId: string): Promise<void>;
  /** Whether the account has this script (a consumer must name one). */
  scriptExists(accountId: string, script: string): Promise<boolean>;
  /** The scripts of the account whose deployed version binds each queue (by queue id), as producers. */
  producers(accountId: string): Promise<Map<string, string[]>>;
}

/** Queues of every account: records here, messages in each account's queue engine (engine-client.ts). */
export class QueueService {
  readonly #store: SqlQueueStore;
  readonly #engine: QueueEngineClient;
  readonly #hooks: QueueHooks;
  readonly #limits: QueueLimits;
  readonly #clock: Clock;

  constructor(deps: {
    store: SqlQueueStore;
    engine: QueueEngineClient;
    hooks: QueueHooks;
    limits?: Partial<QueueLimits> | undefined;
    clock: Clock;
  }) {
    this.#store = deps.store;
    this.#engine = deps.engine;
    this.#hooks = deps.hooks;
    this.#limits = { ...DEFAULT_QUEUE_LIMITS, ...deps.limits };
    this.#clock = deps.clock;
  }

  get limits(): QueueLimits {
    return this.#limits;
  }

  async create(
    accountId: string,
    body: { queue_name: string; settings?: QueueUpdate['settings'] | undefined },
  ): Promise<QueueRecord> {
    checkName(body.queue_name);
    if (await this.#store.find(accountId, body.queue_name)) throw QueueErrors.duplicateName(body.queue_name);
    if ((await this.#store.count(accountId)) >= this.#limits.maxQueuesPerAccount) {
      throw QueueErrors.tooMany(this.#limits.maxQueuesPerAccount);
    }
    const now = isoNow(this.#clock);
    const record: QueueRecord = {
      queue_id: randomBytes(16).toString('hex'),
      account_id: accountId,
      queue_name: body.queue_name,
      delivery_delay: body.settings?.delivery_delay ?? 0,
      delivery_paused: body.settings?.delivery_paused ? 1 : 0,
      message_retention_period: body.settings?.message_retention_period ?? DEFAULT_RETENTION_SECONDS,
      created_on: now,
      modified_on: now,
    };
    await this.#store.insert(record);
    await this.#hooks.created(accountId);
    // A default delay is the engine's config.
    if (record.delivery_delay !== 0) await this.#hooks.consumersChanged(accountId);
    return record;
  }

  async require(accountId: string, idOrName: string): Promise<QueueRecord> {
    const found = await this.#store.find(accountId, idOrName);
    if (!found) throw QueueErrors.notFound(idOrName);
    return found;
  }

  list(accountId: string, names: readonly string[] = []): Promise<QueueRecord[]> {
    return this.#store.list(accountId, names);
  }

  /** PUT and PATCH: a new name and settings (a PATCH leaves what it omits as it was). */
  async update(accountId: string, idOrName: string, body: QueueUpdate): Promise<QueueRecord> {
    const queue = await this.require(accountId, idOrName);
    if (body.queue_name !== undefined && body.queue_name !== queue.queue_name) {
      checkName(body.queue_name);
      if (await this.#store.find(accountId, body.queue_name)) throw QueueErrors.duplicateName(body.queue_name);
    }
    const updated: QueueRecord = {
      ...queue,
      queue_name: body.queue_name ?? queue.queue_name,
      delivery_delay: body.settings?.delivery_delay ?? queue.delivery_delay,
      delivery_paused:
        body.settings?.delivery_paused === undefined ? queue.delivery_paused : body.settings.delivery_paused ? 1 : 0,
      message_retention_period: body.settings?.message_retention_period ?? queue.message_retention_period,
      modified_on: isoNow(this.#clock),
    };
    await this.#store.update(updated);
    // The engine's config names dead letter queues by name, and holds each queue's delay and whether it delivers.
    if (
      updated.queue_name !== queue.queue_name ||
      updated.delivery_delay !== queue.delivery_delay ||
      updated.delivery_paused !== queue.delivery_paused
    )
      await this.#hooks.consumersChanged(accountId);
    return updated;
  }

  /** The record and its consumer go; a script still bound to it as a producer keeps it from going (11005). */
  async delete(accountId: string, idOrName: string): Promise<void> {
    const queue = await this.require(accountId, idOrName);
    const producers = (await this.#hooks.producers(accountId)).get(queue.queue_id) ?? [];
    if (producers.length > 0) throw QueueErrors.inUse(queue.queue_name, producers);
    const hadConsumer = (await this.#store.consumers(accountId, queue.queue_id)).length > 0;
    await this.#store.delete(accountId, queue.queue_id);
    if (hadConsumer) await this.#hooks.consumersChanged(accountId);
  }

  consumers(accountId: string, queueId?: string): Promise<ConsumerRecord[]> {
    return this.#store.consumers(accountId, queueId);
  }

  producers(accountId: string): Promise<Map<string, string[]>> {
    return this.#hooks.producers(accountId);
  }

  metrics(queue: QueueRecord): Promise<QueueMetrics> {
    return this.#engine.metrics(queue.account_id, queue.queue_id);
  }

  async addConsumer(accountId: string, idOrName: string, body: ConsumerBody): Promise<ConsumerRecord> {
    const queue = await this.require(accountId, idOrName);
    const record = await this.#consumerRecord(queue, body, {
      consumer_id: randomBytes(16).toString('hex'),
      created_on: isoNow(this.#clock),
    });
    if ((await this.#store.consumers(accountId, queue.queue_id)).length > 0) {
      throw QueueErrors.consumerExists(queue.queue_name);
    }
    await this.#store.insertConsumer(record);
    await this.#hooks.consumersChanged(accountId);
    return record;
  }

  async requireConsumer(accountId: string, queueIdOrName: string, consumerId: string): Promise<ConsumerRecord> {
    const queue = await this.require(accountId, queueIdOrName);
    const consumer = (await this.#store.consumers(accountId, queue.queue_id)).find(
      (c) => c.consumer_id === consumerId || c.script_name === consumerId,
    );
    if (!consumer) throw QueueErrors.consumerNotFound(consumerId);
    return consumer;
  }

  async updateConsumer(
    accountId: string,
    queueIdOrName: string,
    consumerId: string,
    body: ConsumerBody,
  ): Promise<ConsumerRecord> {
    const queue = await this.require(accountId, queueIdOrName);
    const existing = await this.requireConsumer(accountId, queue.queue_id, consumerId);
    const record = await this.#consumerRecord(queue, body, existing);
    await this.#store.replaceConsumer(record);
    await this.#hooks.consumersChanged(accountId);
    return record;
  }

  async removeConsumer(accountId: string, queueIdOrName: string, consumerId: string): Promise<void> {
    const consumer = await this.requireConsumer(accountId, queueIdOrName, consumerId);
    await this.#store.deleteConsumer(accountId, consumer.consumer_id);
    await this.#hooks.consumersChanged(accountId);
  }

  /** A deleted script's consumers go with it. */
  async forgetScript(accountId: string, script: string): Promise<void> {
    if (await this.#store.forgetScript(accountId, script)) await this.#hooks.consumersChanged(accountId);
  }

  /**
   * A consumer as a body describes it. A dead letter queue that does not exist is made, as Cloudflare does;
   * it is never the queue itself (its failures would come back to it for ever).
   */
  async #consumerRecord(
    queue: QueueRecord,
    body: ConsumerBody,
    identity: { consumer_id: string; created_on: string },
  ): Promise<ConsumerRecord> {
    if (body.type === 'http_pull') throw QueueErrors.httpPullUnsupported();
    const script = body.script_name;
    if (script === undefined || script === '') {
      throw QueueErrors.validation('script_name is required for a worker consumer.');
    }
    if (!(await this.#hooks.scriptExists(queue.account_id, script))) throw QueueErrors.workerNotFound(script);
    const dlq = body.dead_letter_queue || null;
    if (dlq !== null) {
      if (dlq === queue.queue_name || dlq === queue.queue_id) {
        throw QueueErrors.validation('A queue cannot be its own dead letter queue.');
      }
      const found = await this.#store.find(queue.account_id, dlq);
      if (!found) await this.create(queue.account_id, { queue_name: dlq });
    }
    const settings = body.settings ?? {};
    return {
      ...identity,
      queue_id: queue.queue_id,
      account_id: queue.account_id,
      script_name: script,
      dead_letter_queue: dlq,
      batch_size: settings.batch_size ?? CONSUMER_DEFAULTS.batch_size,
      max_retries: settings.max_retries ?? CONSUMER_DEFAULTS.max_retries,
      max_wait_time_ms: settings.max_wait_time_ms ?? CONSUMER_DEFAULTS.max_wait_time_ms,
      max_concurrency: settings.max_concurrency ?? null,
      retry_delay: settings.retry_delay ?? CONSUMER_DEFAULTS.retry_delay,
    };
  }
}

function checkName(name: string): void {
  if (!QUEUE_NAME.test(name) || QUEUE_ID.test(name)) throw QueueErrors.invalidName(name);
}
