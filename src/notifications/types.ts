import type { Mechanisms } from './schemas.ts';

export interface Policy {
  id: string;
  account_id: string;
  name: string;
  description: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: Mechanisms;
  filters: Record<string, string[]>;
  alert_interval: string | null;
  created: string;
  modified: string;
}

export interface Webhook {
  id: string;
  account_id: string;
  name: string;
  url: string;
  type: string;
  /** AES-GCM sealed with the webhook id as associated data; never leaves the server. */
  secret_sealed: string | null;
  created_at: string;
  last_success: string | null;
  last_failure: string | null;
}

/** What notifications needs to know about pools; load balancing provides it (it never imports us). */
export interface PoolDirectory {
  poolExists(accountId: string, poolId: string): boolean | Promise<boolean>;
  /** Pools of the account whose legacy `notification_email` is not empty. */
  countPoolsWithLegacyEmail(accountId: string): number | Promise<number>;
  /** A pool's legacy `notification_email` ("" = none), or undefined when the account has no such pool. */
  legacyEmailOf(accountId: string, poolId: string): string | undefined | Promise<string | undefined>;
}
