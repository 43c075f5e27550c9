import type { SqlDatabase } from '../db/index.ts';
import type { EgressPolicy } from '../egress/index.ts';
import type { HealthEventBus } from '../load-balancing/index.ts';
import type { PoolEnablementBus } from '../load-balancing/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import { DEFAULT_RETRY, Dispatcher, type RetryPolicy } from './dispatcher.ts';
import { PoolEnablementFanout } from './enablement-fanout.ts';
import { HealthEventFanout } from './fanout.ts';
import { DeliveryHistory } from './history.ts';
import { DEFAULT_DEPRECATION_INTERVAL_MS } from './legacy.ts';
import type { Mailer } from './mail.ts';
import { Outbox } from './outbox.ts';
import { AlertPolicies } from './policies.ts';
import { AlertSilences } from './silences.ts';
import { HistoryRetention } from './retention.ts';
import { PolicyDeliveries } from './policy-deliveries.ts';
import { SqlNotificationStore } from './store.ts';
import { SqlAlertStateStore } from './alert-state-store.ts';
import type { PoolDirectory } from './types.ts';
import { WebhookDestinations } from './webhooks.ts';
import { WebhookSender } from './webhook-sender.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';

export interface NotificationOptions {
  db: SqlDatabase;
  secretBox: SecretBox;
  logger: Logger;
  pools: PoolDirectory;
  mailer: Mailer;
  /** At most one deprecation notice per legacy address per this interval (default 24 h). */
  deprecationIntervalMs?: number;
  retry?: RetryPolicy;
  /** Which addresses webhooks may reach (checked on create/update and on every connection). */
  egress: EgressPolicy;
  /** Per phase: connect, answer headers, each body chunk (default 5 s). */
  webhookTimeoutMs?: number;
  /** Total per send, connect to last body byte (default 10 s): bounds a test message and a delivery. */
  webhookDeadlineMs?: number;
  concurrency?: number;
  /** Delivery results and outbox depth for /metrics. */
  metrics?: LedgeMetrics | undefined;
  /** How long delivery history is kept and shown (default 30 days). */
  historyRetentionMs?: number;
  /** How long a claimed delivery stays its node's (default 120 s). */
  leaseMs?: number;
  /** With several nodes: how often the dispatcher looks at the table for rows it was not told of. */
  pollMs?: number | undefined;
  /** This node's name: its claims are its own, so a restart re-sends only what this node had claimed. */
  nodeId?: string | undefined;
  /** With several nodes, one at a time prunes history. */
  gate?: JobGate | undefined;
  /** Retries, leases, throttles and history retention run on it (tests pass a clock they advance). */
  clock?: Clock | undefined;
}

/**
 * The account-level notifications service: policies and destinations (API side), the health-event fan-out
 * into the outbox (inside the event's transaction), and the dispatcher that delivers (a BackgroundService).
 * Constructing it starts nothing.
 */
export class NotificationService {
  readonly policies: AlertPolicies;
  readonly silences: AlertSilences;
  readonly webhooks: WebhookDestinations;
  readonly history: DeliveryHistory;
  /** A BackgroundService: prunes history past its retention. */
  readonly retention: HistoryRetention;
  readonly outbox: Outbox;
  readonly dispatcher: Dispatcher;
  readonly fanout: HealthEventFanout;
  readonly enablementFanout: PoolEnablementFanout;
  readonly mailer: Mailer;
  readonly pools: PoolDirectory;

  constructor(options: NotificationOptions) {
    const store = new SqlNotificationStore(options.db);
    const sender = new WebhookSender({
      egress: options.egress,
      timeoutMs: options.webhookTimeoutMs ?? 5_000,
      deadlineMs: options.webhookDeadlineMs ?? 10_000,
    });
    this.mailer = options.mailer;
    this.pools = options.pools;
    this.policies = new AlertPolicies({ store, pools: options.pools });
    this.silences = new AlertSilences({ db: options.db, policies: this.policies });
    this.webhooks = new WebhookDestinations({ store, sender, secretBox: options.secretBox });
    this.history = new DeliveryHistory(options.db, options.historyRetentionMs);
    this.retention = new HistoryRetention({
      history: this.history,
      logger: options.logger.child({ component: 'notifications' }),
      gate: options.gate,
      clock: options.clock,
    });
    this.outbox = new Outbox(options.db, { owner: options.nodeId });
    this.dispatcher = new Dispatcher({
      db: options.db,
      store,
      outbox: this.outbox,
      history: this.history,
      webhooks: sender,
      mailer: options.mailer,
      secretBox: options.secretBox,
      pools: options.pools,
      logger: options.logger.child({ component: 'notifications' }),
      retry: options.retry ?? DEFAULT_RETRY,
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
      pollMs: options.pollMs,
      metrics: options.metrics,
      silences: this.silences,
      clock: options.clock,
    });
    const outbox = this.outbox;
    options.metrics?.registry.onCollect(async () => options.metrics?.outboxDepth.set({}, await outbox.pendingCount()));
    const state = new SqlAlertStateStore();
    const deliveries = new PolicyDeliveries({ store, state, outbox: this.outbox });
    this.fanout = new HealthEventFanout({
      state,
      outbox: this.outbox,
      deliveries,
      deprecationIntervalMs: options.deprecationIntervalMs ?? DEFAULT_DEPRECATION_INTERVAL_MS,
      onWritten: this.dispatcher.wake,
      clock: options.clock,
    });
    this.enablementFanout = new PoolEnablementFanout({
      deliveries,
      onWritten: this.dispatcher.wake,
      clock: options.clock,
    });
  }

  /** Consumes health events (and pool enablement changes when given); returns the unsubscribe function. */
  subscribeTo(bus: HealthEventBus, enablement?: PoolEnablementBus): () => void {
    const unsubscribe = [bus.subscribe(this.fanout.handle), enablement?.subscribe(this.enablementFanout.handle)];
    return () => {
      for (const off of unsubscribe) off?.();
    };
  }
}
