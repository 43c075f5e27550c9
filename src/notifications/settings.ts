import { DEFAULT_RETRY, type RetryPolicy } from './dispatcher.ts';
import { DEFAULT_HISTORY_RETENTION_MS } from './history.ts';
import { DEFAULT_DEPRECATION_INTERVAL_MS } from './legacy.ts';

export interface NotificationSettings {
  deprecationIntervalMs: number;
  retry: RetryPolicy;
  webhookTimeoutMs: number;
  webhookDeadlineMs: number;
  historyRetentionMs: number;
  leaseMs: number;
  pollMs: number;
}

/**
 * Tunables from the environment (all optional):
 * LEDGE_NOTIFY_DEPRECATION_INTERVAL (seconds between deprecation notices per address, default 86400),
 * LEDGE_NOTIFY_RETRY_BASE_MS / LEDGE_NOTIFY_RETRY_MAX_MS (back-off, default 1000 / 60000),
 * LEDGE_NOTIFY_GIVE_UP_AFTER (seconds a delivery is retried, default 86400),
 * LEDGE_NOTIFY_WEBHOOK_TIMEOUT_MS (per phase: connect, headers, each body chunk; default 5000),
 * LEDGE_NOTIFY_WEBHOOK_DEADLINE_MS (total per send, test messages included; default 10000),
 * LEDGE_NOTIFY_HISTORY_DAYS (days of delivery history kept and shown, default 30 as on Cloudflare),
 * LEDGE_NOTIFY_LEASE_MS (how long a claimed delivery is its node's: a node that dies mid-send has its deliveries
 * sent by another node this long after the claim; default 120000, longer than any send's deadline),
 * LEDGE_NOTIFY_POLL_MS (with several nodes, how often each looks for deliveries it was not told of: other nodes'
 * rows whose lease ran out; default 5000).
 */
export function notificationSettings(env: NodeJS.ProcessEnv = process.env): NotificationSettings {
  const number = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
    return value;
  };
  return {
    deprecationIntervalMs:
      number('LEDGE_NOTIFY_DEPRECATION_INTERVAL', DEFAULT_DEPRECATION_INTERVAL_MS / 1000, 0) * 1000,
    retry: {
      baseDelayMs: number('LEDGE_NOTIFY_RETRY_BASE_MS', DEFAULT_RETRY.baseDelayMs, 1),
      maxDelayMs: number('LEDGE_NOTIFY_RETRY_MAX_MS', DEFAULT_RETRY.maxDelayMs, 1),
      giveUpAfterMs: number('LEDGE_NOTIFY_GIVE_UP_AFTER', DEFAULT_RETRY.giveUpAfterMs / 1000, 1) * 1000,
    },
    webhookTimeoutMs: number('LEDGE_NOTIFY_WEBHOOK_TIMEOUT_MS', 5_000, 1),
    webhookDeadlineMs: number('LEDGE_NOTIFY_WEBHOOK_DEADLINE_MS', 10_000, 1),
    historyRetentionMs: number('LEDGE_NOTIFY_HISTORY_DAYS', DEFAULT_HISTORY_RETENTION_MS / 86_400_000, 1) * 86_400_000,
    leaseMs: number('LEDGE_NOTIFY_LEASE_MS', 120_000, 1_000),
    pollMs: number('LEDGE_NOTIFY_POLL_MS', 5_000, 100),
  };
}
