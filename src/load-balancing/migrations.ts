import type { Migration } from '../db/index.ts';

/**
 * Pools and monitors keep their full API representation in `data` (JSON) and copy the columns that
 * lists filter and order by. Health state lives in its own tables so a config write never races a
 * probe result, and events outlive the pools they describe (no foreign key on lb_health_events).
 */
export const loadBalancingMigrations: readonly Migration[] = [
  {
    id: 'load-balancing/0001_initial',
    sql: `
      CREATE TABLE lb_monitors (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        data TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE INDEX lb_monitors_account ON lb_monitors(account_id, created_on, id);

      CREATE TABLE lb_pools (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        monitor_id TEXT REFERENCES lb_monitors(id),
        notification_email TEXT NOT NULL DEFAULT '',
        data TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        UNIQUE (account_id, name)
      );
      CREATE INDEX lb_pools_order ON lb_pools(account_id, name, id);
      CREATE INDEX lb_pools_monitor ON lb_pools(account_id, monitor_id, name, id);

      CREATE TABLE lb_origin_health (
        pool_id TEXT NOT NULL REFERENCES lb_pools(id) ON DELETE CASCADE,
        origin_name TEXT NOT NULL,
        address TEXT NOT NULL,
        healthy INTEGER NOT NULL,
        successes INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        failure_reason TEXT NOT NULL,
        response_code INTEGER,
        rtt_ms REAL,
        checked_at TEXT NOT NULL,
        PRIMARY KEY (pool_id, origin_name)
      );

      CREATE TABLE lb_pool_health (
        pool_id TEXT PRIMARY KEY REFERENCES lb_pools(id) ON DELETE CASCADE,
        healthy INTEGER NOT NULL,
        reason TEXT NOT NULL,
        changed_at TEXT NOT NULL
      );

      CREATE TABLE lb_health_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        occurred_at TEXT NOT NULL,
        account_id TEXT NOT NULL,
        pool_id TEXT NOT NULL,
        pool_name TEXT NOT NULL,
        event_source TEXT NOT NULL,
        origin_name TEXT,
        origin_address TEXT,
        new_health TEXT NOT NULL,
        reason TEXT NOT NULL,
        legacy_notification_email TEXT NOT NULL DEFAULT ''
      );
      CREATE INDEX lb_health_events_pool ON lb_health_events(account_id, pool_id, id);

      CREATE TABLE lb_previews (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        result TEXT NOT NULL,
        created_on TEXT NOT NULL
      );
    `,
  },
  {
    // Load balancers live in a zone (deleted with it). lb_load_balancer_pools lists every pool a load balancer
    // names: it answers pool references, and its foreign key (no cascade) makes deleting a used pool fail.
    id: 'load-balancing/0002_load_balancers',
    sql: `
      CREATE TABLE lb_load_balancers (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        zone_id TEXT NOT NULL REFERENCES zones(id) ON DELETE CASCADE,
        name TEXT NOT NULL UNIQUE,
        data TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL
      );
      CREATE INDEX lb_load_balancers_zone ON lb_load_balancers(zone_id, name, id);

      CREATE TABLE lb_load_balancer_pools (
        load_balancer_id TEXT NOT NULL REFERENCES lb_load_balancers(id) ON DELETE CASCADE,
        pool_id TEXT NOT NULL REFERENCES lb_pools(id),
        PRIMARY KEY (load_balancer_id, pool_id)
      );
      CREATE INDEX lb_load_balancer_pools_pool ON lb_load_balancer_pools(pool_id);
    `,
  },
];
