/**
 * What the notification_email migration reports (src/email-migration/migrate.ts makes it; `ledge notifications
 * migrate --json` prints it and the dashboard's `POST /dashboard/migration` streams it as its last line).
 */

/** A policy the migration creates, or an existing one it extends with more pools. */
export interface MigrationPolicyChange {
  action: 'create' | 'extend';
  policyId: string | null;
  name: string;
  addresses: string[];
  poolIds: string[];
}

export interface MigrationReport {
  dry_run: boolean;
  complete: boolean;
  pools_scanned: number;
  pools_with_legacy_email: number;
  policies_created: string[];
  policies_reused: string[];
  pages_patched: number;
  passes: number;
  duration_ms: number;
  /** Dry run only: what a real run would do. */
  plan?: { policies: MigrationPolicyChange[]; pages_to_patch: number[] };
  remaining_legacy_pools?: { id: string; name: string }[];
}
