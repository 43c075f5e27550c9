import type { RetryPolicy } from './dispatcher.ts';

/** The notifications' tunables, as the server's settings give them (LEDGE_NOTIFY_*, src/server/settings/schema.ts). */
export interface NotificationSettings {
  deprecationIntervalMs: number;
  retry: RetryPolicy;
  webhookTimeoutMs: number;
  webhookDeadlineMs: number;
  historyRetentionMs: number;
  leaseMs: number;
  pollMs: number;
}
