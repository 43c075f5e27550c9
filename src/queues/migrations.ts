import type { SchemaMigration } from '../db/index.ts';

/**
 * Queues: the record of each queue and of its consumer (the messages live in the account's queue engine,
 * workerd's queues.js). Names are unique within an account; ids (32 hex digits) are never reused, so a
 * deleted queue's messages can never reach a new one of the same name. One consumer per queue, as on Cloudflare.
 */
export const queuesMigrations: readonly SchemaMigration[] = [
  {
    id: 'queues/0001_queues',
    sql: `
      CREATE TABLE queues (
        queue_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        queue_name TEXT NOT NULL,
        delivery_delay INTEGER NOT NULL DEFAULT 0,
        delivery_paused INTEGER NOT NULL DEFAULT 0,
        message_retention_period INTEGER NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        UNIQUE (account_id, queue_name)
      );
      CREATE TABLE queue_consumers (
        consumer_id TEXT PRIMARY KEY,
        queue_id TEXT NOT NULL UNIQUE REFERENCES queues(queue_id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        dead_letter_queue TEXT,
        batch_size INTEGER NOT NULL,
        max_retries INTEGER NOT NULL,
        max_wait_time_ms INTEGER NOT NULL,
        max_concurrency INTEGER,
        retry_delay INTEGER NOT NULL,
        created_on TEXT NOT NULL
      );
      CREATE INDEX queue_consumers_script ON queue_consumers (account_id, script_name);
    `,
  },
];
