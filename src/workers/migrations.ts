import type { SchemaMigration } from '../db/index.ts';

/** workers/0001_initial on PostgreSQL: the same tables, BIGINT for numbers. */
const POSTGRES_INITIAL = `
  CREATE TABLE worker_scripts (
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tag TEXT NOT NULL,
    current_deployment_id TEXT,
    workers_dev INTEGER NOT NULL DEFAULT 0,
    previews_enabled INTEGER NOT NULL DEFAULT 0,
    settings TEXT NOT NULL DEFAULT '{}',
    last_deployed_from TEXT NOT NULL DEFAULT 'api',
    created_on TEXT NOT NULL,
    modified_on TEXT NOT NULL,
    PRIMARY KEY (account_id, name)
  );
  CREATE TABLE worker_versions (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    script_name TEXT NOT NULL,
    number BIGINT NOT NULL,
    main_module TEXT NOT NULL,
    modules TEXT NOT NULL,
    bindings TEXT NOT NULL,
    compatibility_date TEXT,
    compatibility_flags TEXT NOT NULL,
    etag TEXT NOT NULL,
    source TEXT NOT NULL,
    author_email TEXT,
    created_on TEXT NOT NULL,
    FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE,
    UNIQUE (account_id, script_name, number)
  );
  CREATE TABLE worker_deployments (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    script_name TEXT NOT NULL,
    version_id TEXT NOT NULL REFERENCES worker_versions(id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    author_email TEXT,
    annotations TEXT NOT NULL DEFAULT '{}',
    created_on TEXT NOT NULL,
    FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
  );
  CREATE INDEX worker_deployments_script ON worker_deployments(account_id, script_name, created_on);
  CREATE TABLE worker_secrets (
    account_id TEXT NOT NULL,
    script_name TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_on TEXT NOT NULL,
    modified_on TEXT NOT NULL,
    PRIMARY KEY (account_id, script_name, name),
    FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
  );
  CREATE TABLE worker_account_subdomains (
    account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    subdomain TEXT NOT NULL UNIQUE
  );
`;

export const workerMigrations: readonly SchemaMigration[] = [
  {
    id: 'workers/0001_initial',
    sql: {
      sqlite: `
      CREATE TABLE worker_scripts (
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        tag TEXT NOT NULL,
        current_deployment_id TEXT,
        workers_dev INTEGER NOT NULL DEFAULT 0,
        previews_enabled INTEGER NOT NULL DEFAULT 0,
        settings TEXT NOT NULL DEFAULT '{}',
        last_deployed_from TEXT NOT NULL DEFAULT 'api',
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        PRIMARY KEY (account_id, name)
      );
      CREATE TABLE worker_versions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        number INTEGER NOT NULL,
        main_module TEXT NOT NULL,
        modules TEXT NOT NULL,
        bindings TEXT NOT NULL,
        compatibility_date TEXT,
        compatibility_flags TEXT NOT NULL,
        etag TEXT NOT NULL,
        source TEXT NOT NULL,
        author_email TEXT,
        created_on TEXT NOT NULL,
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE,
        UNIQUE (account_id, script_name, number)
      );
      CREATE TABLE worker_deployments (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        version_id TEXT NOT NULL REFERENCES worker_versions(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        author_email TEXT,
        annotations TEXT NOT NULL DEFAULT '{}',
        created_on TEXT NOT NULL,
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
      );
      CREATE INDEX worker_deployments_script ON worker_deployments(account_id, script_name, created_on);
      CREATE TABLE worker_secrets (
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        sealed TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        PRIMARY KEY (account_id, script_name, name),
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
      );
      CREATE TABLE worker_account_subdomains (
        account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        subdomain TEXT NOT NULL UNIQUE
      );
    `,
      postgres: POSTGRES_INITIAL,
    },
  },
  {
    // limits.cpu_ms of each version (NULL: the 30 s default), enforced by the runtime's watchdog.
    id: 'workers/0002_cpu_limit',
    sql: {
      sqlite: `ALTER TABLE worker_versions ADD COLUMN cpu_ms INTEGER;`,
      postgres: 'ALTER TABLE worker_versions ADD COLUMN cpu_ms BIGINT;',
    },
  },
  {
    // DELETE /workers/subdomain: an account that gave its subdomain up does not get one re-assigned on the next read.
    id: 'workers/0003_released_subdomains',
    sql: `
      CREATE TABLE worker_released_subdomains (
        account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE
      );
    `,
  },
  {
    // Deployments of one script in the order they were made (newest first), also within one
    // millisecond: a real column instead of SQLite's rowid. Existing rows keep their rowid order.
    id: 'workers/0004_deployment_sequence',
    sql: {
      sqlite: `
        ALTER TABLE worker_deployments ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
        UPDATE worker_deployments SET seq = rowid;
      `,
      postgres: 'ALTER TABLE worker_deployments ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;',
    },
  },
  {
    // Cron Triggers: the schedules of each script, and one row per run. A run's (script, cron, scheduled
    // time) is unique, so with several nodes only the one whose INSERT wins runs an occurrence.
    id: 'workers/0005_cron_triggers',
    sql: `
      CREATE TABLE worker_schedules (
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        cron TEXT NOT NULL,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        PRIMARY KEY (account_id, script_name, cron),
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
      );
      CREATE TABLE worker_cron_runs (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        cron TEXT NOT NULL,
        scheduled_time TEXT NOT NULL,
        source TEXT NOT NULL,
        status TEXT NOT NULL,
        started_on TEXT NOT NULL,
        duration_ms INTEGER,
        error TEXT,
        UNIQUE (account_id, script_name, cron, scheduled_time),
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE
      );
      CREATE INDEX worker_cron_runs_script ON worker_cron_runs(account_id, script_name, started_on);
    `,
  },
  {
    // Console output of functions, kept in the database when several nodes share it (one node keeps it in
    // files of its data dir), so the history shows every node's lines.
    id: 'workers/0006_log_lines',
    sql: {
      sqlite: `
        CREATE TABLE worker_log_lines (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          account_id TEXT NOT NULL,
          script_name TEXT NOT NULL,
          time TEXT NOT NULL,
          level TEXT NOT NULL,
          message TEXT NOT NULL
        );
        CREATE INDEX worker_log_lines_script ON worker_log_lines(account_id, script_name, id);
        CREATE INDEX worker_log_lines_time ON worker_log_lines(time);`,
      postgres: `
        CREATE TABLE worker_log_lines (
          id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
          account_id TEXT NOT NULL,
          script_name TEXT NOT NULL,
          time TEXT NOT NULL,
          level TEXT NOT NULL,
          message TEXT NOT NULL
        );
        CREATE INDEX worker_log_lines_script ON worker_log_lines(account_id, script_name, id);
        CREATE INDEX worker_log_lines_time ON worker_log_lines(time);`,
    },
  },
  {
    // Requests and status classes per script per minute (then hour), for the dashboard's charts
    // (function-samples.ts says what is kept and for how long).
    id: 'workers/0007_request_samples',
    sql: `
      CREATE TABLE worker_request_samples (
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        resolution BIGINT NOT NULL,
        bucket BIGINT NOT NULL,
        requests BIGINT NOT NULL,
        exceptions BIGINT NOT NULL,
        s1xx BIGINT NOT NULL,
        s2xx BIGINT NOT NULL,
        s3xx BIGINT NOT NULL,
        s4xx BIGINT NOT NULL,
        s5xx BIGINT NOT NULL,
        PRIMARY KEY (account_id, script_name, resolution, bucket)
      );
      CREATE INDEX worker_request_samples_age ON worker_request_samples(resolution, bucket);`,
  },
  {
    // Static assets: each version's manifest and serving config, the account's content-addressed files
    // (hash -> blob; `touched_on` spares a file an upload session counts on from collection), and upload
    // sessions (the manifest a completion token stands for).
    id: 'workers/0008_assets',
    sql: `
      ALTER TABLE worker_versions ADD COLUMN assets TEXT;
      CREATE TABLE worker_asset_files (
        account_id TEXT NOT NULL,
        hash TEXT NOT NULL,
        blob_id TEXT NOT NULL,
        size BIGINT NOT NULL,
        touched_on BIGINT NOT NULL,
        PRIMARY KEY (account_id, hash)
      );
      CREATE TABLE worker_asset_sessions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        manifest TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX worker_asset_sessions_expiry ON worker_asset_sessions(expires_at);`,
  },
  {
    // Durable Objects: each class a migration created, under a namespace id that names its objects' storage
    // (kept when the class is renamed or transferred), and the script's last applied migration tag.
    id: 'workers/0009_durable_objects',
    sql: `
      ALTER TABLE worker_scripts ADD COLUMN migration_tag TEXT;
      CREATE TABLE worker_do_namespaces (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        script_name TEXT NOT NULL,
        class_name TEXT NOT NULL,
        use_sqlite INTEGER NOT NULL,
        created_on TEXT NOT NULL,
        FOREIGN KEY (account_id, script_name) REFERENCES worker_scripts(account_id, name) ON DELETE CASCADE,
        UNIQUE (account_id, script_name, class_name)
      );`,
  },
];
