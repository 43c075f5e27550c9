import type { SchemaMigration } from '../db/index.ts';

/**
 * Notifications schema. The outbox is the durable queue between health events and deliveries: rows are
 * written in the same transaction as the event, so an event is never recorded without its deliveries.
 * Times used for scheduling are epoch milliseconds (cheap comparisons); API-facing times are RFC 3339.
 */
export const notificationMigrations: readonly SchemaMigration[] = [
  {
    id: 'notifications/0001_initial',
    sql: {
      sqlite: `
      CREATE TABLE notification_webhooks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        url TEXT NOT NULL,
        type TEXT NOT NULL,
        secret_sealed TEXT,
        created_at TEXT NOT NULL,
        last_success TEXT,
        last_failure TEXT
      );
      CREATE INDEX notification_webhooks_account ON notification_webhooks(account_id, created_at);

      CREATE TABLE notification_policies (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        enabled INTEGER NOT NULL,
        alert_type TEXT NOT NULL,
        mechanisms TEXT NOT NULL,
        filters TEXT NOT NULL,
        alert_interval TEXT,
        created TEXT NOT NULL,
        modified TEXT NOT NULL
      );
      CREATE INDEX notification_policies_match ON notification_policies(account_id, alert_type, enabled);

      -- Last time a policy alerted for one subject (pool or origin), for alert_interval throttling.
      CREATE TABLE notification_policy_throttle (
        policy_id TEXT NOT NULL REFERENCES notification_policies(id) ON DELETE CASCADE,
        subject TEXT NOT NULL,
        last_alert_ms INTEGER NOT NULL,
        PRIMARY KEY (policy_id, subject)
      );

      -- The open incident of a policy for one subject: an Unhealthy alert starts it, the next Healthy one
      -- ends it, and both carry the same alert_correlation_id.
      CREATE TABLE notification_incidents (
        policy_id TEXT NOT NULL REFERENCES notification_policies(id) ON DELETE CASCADE,
        subject TEXT NOT NULL,
        correlation_id TEXT NOT NULL,
        PRIMARY KEY (policy_id, subject)
      );

      -- What was sent, stored once per alert and shared by its deliveries and their history rows (an
      -- alert fanned out to ten webhooks writes its body once, not ten times per attempt).
      CREATE TABLE notification_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        body TEXT NOT NULL
      );

      CREATE TABLE notification_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        event_id INTEGER,
        event_ms INTEGER NOT NULL,
        policy_id TEXT,
        policy_name TEXT NOT NULL,
        alert_type TEXT NOT NULL,
        description TEXT NOT NULL,
        mechanism_type TEXT NOT NULL,
        target TEXT NOT NULL,
        message_id INTEGER REFERENCES notification_messages(id),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_ms INTEGER NOT NULL,
        lease_until_ms INTEGER NOT NULL DEFAULT 0,
        created_ms INTEGER NOT NULL,
        last_error TEXT
      );
      CREATE INDEX notification_outbox_due ON notification_outbox(next_attempt_ms);

      -- One row per delivery attempt. The id column is the API identifier; rows are never looked up by it, so it has
      -- no index (random keys would make every insert touch a random page).
      CREATE TABLE notification_history (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        outbox_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        policy_id TEXT,
        name TEXT NOT NULL,
        alert_type TEXT NOT NULL,
        description TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        mechanism_type TEXT NOT NULL,
        message_id INTEGER REFERENCES notification_messages(id),
        sent TEXT NOT NULL
      );
      CREATE INDEX notification_history_account ON notification_history(account_id, sent);

      -- Last deprecation notice per legacy address, so each address gets at most one per interval.
      CREATE TABLE notification_legacy_notices (
        account_id TEXT NOT NULL,
        address TEXT NOT NULL COLLATE NOCASE,
        last_notice_ms INTEGER NOT NULL,
        PRIMARY KEY (account_id, address)
      );
    `,
      postgres: `
      CREATE TABLE notification_webhooks (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        url TEXT NOT NULL,
        type TEXT NOT NULL,
        secret_sealed TEXT,
        created_at TEXT NOT NULL,
        last_success TEXT,
        last_failure TEXT
      );
      CREATE INDEX notification_webhooks_account ON notification_webhooks(account_id, created_at);

      CREATE TABLE notification_policies (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        enabled INTEGER NOT NULL,
        alert_type TEXT NOT NULL,
        mechanisms TEXT NOT NULL,
        filters TEXT NOT NULL,
        alert_interval TEXT,
        created TEXT NOT NULL,
        modified TEXT NOT NULL
      );
      CREATE INDEX notification_policies_match ON notification_policies(account_id, alert_type, enabled);

      -- Last time a policy alerted for one subject (pool or origin), for alert_interval throttling.
      CREATE TABLE notification_policy_throttle (
        policy_id TEXT NOT NULL REFERENCES notification_policies(id) ON DELETE CASCADE,
        subject TEXT NOT NULL,
        last_alert_ms BIGINT NOT NULL,
        PRIMARY KEY (policy_id, subject)
      );

      -- The open incident of a policy for one subject: an Unhealthy alert starts it, the next Healthy one
      -- ends it, and both carry the same alert_correlation_id.
      CREATE TABLE notification_incidents (
        policy_id TEXT NOT NULL REFERENCES notification_policies(id) ON DELETE CASCADE,
        subject TEXT NOT NULL,
        correlation_id TEXT NOT NULL,
        PRIMARY KEY (policy_id, subject)
      );

      -- What was sent, stored once per alert and shared by its deliveries and their history rows (an
      -- alert fanned out to ten webhooks writes its body once, not ten times per attempt).
      CREATE TABLE notification_messages (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        body TEXT NOT NULL
      );

      CREATE TABLE notification_outbox (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        account_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        event_id BIGINT,
        event_ms BIGINT NOT NULL,
        policy_id TEXT,
        policy_name TEXT NOT NULL,
        alert_type TEXT NOT NULL,
        description TEXT NOT NULL,
        mechanism_type TEXT NOT NULL,
        target TEXT NOT NULL,
        message_id BIGINT REFERENCES notification_messages(id),
        attempts BIGINT NOT NULL DEFAULT 0,
        next_attempt_ms BIGINT NOT NULL,
        lease_until_ms BIGINT NOT NULL DEFAULT 0,
        created_ms BIGINT NOT NULL,
        last_error TEXT
      );
      CREATE INDEX notification_outbox_due ON notification_outbox(next_attempt_ms);

      -- One row per delivery attempt. The id column is the API identifier; rows are never looked up by it, so it has
      -- no index (random keys would make every insert touch a random page).
      CREATE TABLE notification_history (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        outbox_id BIGINT NOT NULL,
        attempt BIGINT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        policy_id TEXT,
        name TEXT NOT NULL,
        alert_type TEXT NOT NULL,
        description TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        mechanism_type TEXT NOT NULL,
        message_id BIGINT REFERENCES notification_messages(id),
        sent TEXT NOT NULL
      );
      CREATE INDEX notification_history_account ON notification_history(account_id, sent);

      -- Last deprecation notice per legacy address, so each address gets at most one per interval.
      CREATE TABLE notification_legacy_notices (
        account_id TEXT NOT NULL,
        address TEXT NOT NULL, -- stored lowercased (SQLite: COLLATE NOCASE)
        last_notice_ms BIGINT NOT NULL,
        PRIMARY KEY (account_id, address)
      );
    `,
    },
  },
  {
    id: 'notifications/0002_history_retention',
    // History older than the retention is pruned (retention.ts); a stored body goes with the last attempt
    // that refers to it, which this index finds without a scan. The outbox gets no such index: a second
    // index on a table that takes an insert and a delete per delivery raised the notifications bench's
    // p99 from ~110-160 ms to ~1 s; the prune reads the outbox's few references once per batch instead.
    sql: `
      CREATE INDEX notification_history_message ON notification_history(message_id);
    `,
  },
  {
    id: 'notifications/0003_outbox_lease_owner',
    // Who holds a row's lease, so that a node releasing its own leases at start leaves other nodes' alone
    // (with PostgreSQL several servers share one outbox). '' is the single embedded server.
    sql: `
      ALTER TABLE notification_outbox ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    // The API request (x-request-id) that wrote an outbox row: sent on as the webhook's x-request-id.
    id: 'notifications/0004_outbox_request_id',
    sql: `ALTER TABLE notification_outbox ADD COLUMN request_id TEXT;`,
  },
  {
    // Alert silences (`/alerting/v3/silences`): a policy's alerts inside [start_ms, end_ms) are recorded as
    // silenced and not delivered. Times kept as epoch ms for the dispatcher's comparisons, and as given.
    id: 'notifications/0005_silences',
    sql: `
      CREATE TABLE notification_silences (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        policy_id TEXT NOT NULL REFERENCES notification_policies(id) ON DELETE CASCADE,
        start_ms BIGINT NOT NULL,
        end_ms BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX notification_silences_account ON notification_silences(account_id, start_ms);
      CREATE INDEX notification_silences_end ON notification_silences(end_ms);
    `,
  },
  {
    // The history lists newest first by (sent, seq): with seq in the index a page is read in order from the index
    // instead of sorting every row since `since` (100,000 rows: the dashboard's history pages, bench/dashboard).
    id: 'notifications/0006_history_page_order',
    sql: `CREATE INDEX notification_history_page ON notification_history(account_id, sent, seq);`,
  },
  {
    // The deliveries chart counts attempts per hour and outcome over a week (history.ts hourly()): with the status in
    // the index the count reads index entries only.
    id: 'notifications/0007_history_hourly',
    sql: `CREATE INDEX notification_history_outcome ON notification_history(account_id, sent, status);`,
  },
];
