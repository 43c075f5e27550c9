import type { SchemaMigration } from '../db/index.ts';

/**
 * Workflows: the record of each (which Worker runs it, with which class), as `wrangler deploy` registers it
 * (PUT /workflows/{name}). Names are unique within an account, as on Cloudflare. The instances themselves
 * live with the Worker that runs them (workerd's bundled workflows.js, config/bindings/workflow.ts).
 */
export const workflowMigrations: readonly SchemaMigration[] = [
  {
    id: 'workflows/0001_workflows',
    sql: `
      CREATE TABLE workflows (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        script_name TEXT NOT NULL,
        class_name TEXT NOT NULL,
        step_limit INTEGER,
        created_on TEXT NOT NULL,
        modified_on TEXT NOT NULL,
        UNIQUE (account_id, name)
      );
    `,
  },
];
