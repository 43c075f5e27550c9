import { createTestDatabase, startPostgresServer, type PostgresServer } from '../test/helpers/postgres-server.ts';

/** Which database a benchmark runs on: `--database postgres` (or LEDGE_BENCH_DATABASE=postgres), else SQLite. */
export const benchBackend = (): 'sqlite' | 'postgres' =>
  process.argv.includes('--database=postgres') ||
  process.argv.join(' ').includes('--database postgres') ||
  process.env['LEDGE_BENCH_DATABASE'] === 'postgres'
    ? 'postgres'
    : 'sqlite';

export interface BenchDatabase {
  backend: 'sqlite' | 'postgres';
  /** Undefined for SQLite (the data dir's file). */
  databaseUrl: string | undefined;
  stop(): Promise<void>;
}

let cluster: PostgresServer | undefined;

/**
 * The database for one benchmark server: nothing to start on SQLite; on PostgreSQL a throwaway cluster
 * (one per benchmark process, Debian's postgresql-15) and a fresh database in it.
 */
export async function benchDatabase(): Promise<BenchDatabase> {
  const backend = benchBackend();
  if (backend === 'sqlite') return { backend, databaseUrl: undefined, stop: async () => undefined };
  cluster ??= await startPostgresServer();
  const database = await createTestDatabase(cluster.adminUrl);
  return {
    backend,
    databaseUrl: database.url,
    async stop() {
      await database.drop();
    },
  };
}

/** Stops the benchmark's PostgreSQL cluster, if one was started. */
export async function stopBenchDatabases(): Promise<void> {
  await cluster?.stop();
  cluster = undefined;
}
