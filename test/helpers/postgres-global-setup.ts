import type { TestProject } from 'vitest/node';
import { startPostgresServer, type PostgresServer } from './postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the run's PostgreSQL cluster (test/helpers/backends.ts makes a database per use). */
    postgresAdminUrl: string;
  }
}

let server: PostgresServer | undefined;

/** One PostgreSQL cluster for the whole run, started before any test file and stopped after the last. */
export async function setup(project: TestProject): Promise<void> {
  server = await startPostgresServer();
  project.provide('postgresAdminUrl', server.adminUrl);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
