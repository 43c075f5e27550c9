import type { Dispatcher } from './dispatcher.ts';
import type { PoolEnablementFanout } from './enablement-fanout.ts';
import type { HealthEventFanout } from './fanout.ts';
import type { DeliveryHistory } from './history.ts';
import type { Mailer } from './mail.ts';
import type { Outbox } from './outbox.ts';
import type { AlertPolicies } from './policies.ts';
import type { HistoryRetention } from './retention.ts';
import type { AlertSilences } from './silences.ts';
import type { PoolDirectory } from './types.ts';
import type { WebhookDestinations } from './webhooks.ts';

/**
 * The account-level notifications service as the platform and the routes see it: policies and destinations
 * (API side), the health-event fan-out into the outbox (inside the event's transaction), and the dispatcher
 * that delivers (a BackgroundService). Its parts are composed in src/notifications/subsystem.ts, the
 * subsystem's one root; building them starts nothing.
 */
export interface NotificationService {
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
}
