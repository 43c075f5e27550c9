import type { Subsystem } from '../api-kit/subsystem.ts';
import type { Cluster } from '../cluster/index.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { EgressPolicy } from '../egress/index.ts';
import type { HealthEventBus, PoolEnablementBus } from '../load-balancing/index.ts';
import type { JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import { SqlAlertStateStore } from './alert-state-store.ts';
import { Dispatcher } from './dispatcher.ts';
import { PoolEnablementFanout } from './enablement-fanout.ts';
import { HealthEventFanout } from './fanout.ts';
import { DeliveryHistory } from './history.ts';
import type { Mailer } from './mail.ts';
import { Outbox } from './outbox.ts';
import { AlertPolicies } from './policies.ts';
import { PolicyDeliveries } from './policy-deliveries.ts';
import { HistoryRetention } from './retention.ts';
import { notificationRoutes } from './routes.ts';
import type { NotificationService } from './service.ts';
import type { NotificationSettings } from './settings.ts';
import { AlertSilences } from './silences.ts';
import { SqlNotificationStore } from './store.ts';
import type { PoolDirectory } from './types.ts';
import { WebhookSender } from './webhook-sender.ts';
import { WebhookDestinations } from './webhooks.ts';

export interface NotificationsSubsystem extends Subsystem {
  service: NotificationService;
}

/** What the platform hands the notifications subsystem (src/server/platform.ts). */
export interface NotificationsDeps {
  db: SqlDatabase;
  secretBox: SecretBox;
  logger: Logger;
  /** Its part of the server's settings (LEDGE_NOTIFY_*, src/server/settings/schema.ts). */
  settings: NotificationSettings;
  pools: PoolDirectory;
  mailer: Mailer;
  /** Which addresses webhooks may reach (checked on create/update and on every connection). */
  egress: EgressPolicy;
  /** Delivery results and outbox depth for /metrics. */
  metrics?: LedgeMetrics | undefined;
  /**
   * The other nodes on this database, when there are any: the outbox's claims carry this node's name (a
   * restart re-sends only what this node had claimed) and the dispatcher looks at the table every
   * `settings.pollMs` for rows it was not told of. A lone node keeps the owner it always had, and no poll.
   */
  cluster?: Cluster | undefined;
  /** With several nodes, one at a time prunes history. */
  gate?: JobGate | undefined;
  /** Retries, leases, throttles and history retention run on it (tests pass a clock they advance). */
  clock: Clock;
  healthEvents: HealthEventBus;
  poolEnablement: PoolEnablementBus;
}

/**
 * Alert policies, destinations, the outbox and its dispatcher, composed here and nowhere else. It subscribes
 * to the health and pool enablement events here, before anything runs, so no event is recorded without its
 * deliveries. Building it starts nothing.
 */
export function createNotificationsSubsystem(deps: NotificationsDeps): NotificationsSubsystem {
  const { settings, clock } = deps;
  const logger = deps.logger.child({ component: 'notifications' });
  const store = new SqlNotificationStore(deps.db);
  const sender = new WebhookSender({
    egress: deps.egress,
    timeoutMs: settings.webhookTimeoutMs,
    deadlineMs: settings.webhookDeadlineMs,
  });
  const policies = new AlertPolicies({ store, pools: deps.pools }, clock);
  const silences = new AlertSilences({ db: deps.db, policies }, clock);
  const webhooks = new WebhookDestinations({ store, sender, secretBox: deps.secretBox }, clock);
  const history = new DeliveryHistory(deps.db, settings.historyRetentionMs, clock);
  const retention = new HistoryRetention({ history, logger, gate: deps.gate, clock });
  const outbox = new Outbox(deps.db, { owner: deps.cluster?.nodeId });
  const dispatcher = new Dispatcher({
    db: deps.db,
    store,
    outbox,
    history,
    webhooks: sender,
    mailer: deps.mailer,
    secretBox: deps.secretBox,
    pools: deps.pools,
    logger,
    retry: settings.retry,
    leaseMs: settings.leaseMs,
    pollMs: deps.cluster ? settings.pollMs : undefined,
    metrics: deps.metrics,
    silences,
    clock,
  });
  deps.metrics?.registry.onCollect(async () => deps.metrics?.outboxDepth.set({}, await outbox.pendingCount()));
  const state = new SqlAlertStateStore();
  const deliveries = new PolicyDeliveries({ store, state, outbox });
  const fanout = new HealthEventFanout({
    state,
    outbox,
    deliveries,
    deprecationIntervalMs: settings.deprecationIntervalMs,
    onWritten: dispatcher.wake,
    clock,
  });
  const enablementFanout = new PoolEnablementFanout({ deliveries, onWritten: dispatcher.wake, clock });
  deps.healthEvents.subscribe(fanout.handle);
  deps.poolEnablement.subscribe(enablementFanout.handle);

  const service: NotificationService = {
    policies,
    silences,
    webhooks,
    history,
    retention,
    outbox,
    dispatcher,
    fanout,
    enablementFanout,
    mailer: deps.mailer,
    pools: deps.pools,
  };
  return {
    name: 'notifications',
    service,
    background: [dispatcher, retention],
    mountRoutes: (api) => api.route('/', notificationRoutes(service)),
  };
}
