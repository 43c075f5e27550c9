import { defineConfig } from 'vitest/config';

// Integration tests start real servers (ledge, workerd, SMTP, origins) on 127.0.0.1 with port 0.
// Three workers on the two cores of the target machine: the tests wait on servers and processes they start, so a
// third file in flight fills the cores (measured: see docs/benchmarks.md, suite wall time). Slow real-client
// tests get generous timeouts.
/** The suites that run a second time with every server on PostgreSQL (store-level suites run both backends themselves). */
const POSTGRES_SUITES = [
  'test/load-balancing/**/*.test.ts',
  'test/notifications/**/*.test.ts',
  'test/email-migration/**/*.test.ts',
  'test/zones/{zones-api,sdk,cli}.test.ts',
  'test/observability/**/*.test.ts',
  'test/workers/crons.test.ts',
  // Workers routes and Custom Domains: their records and the table built from them.
  'test/worker-routes/{api,precedence}.test.ts',
  // Accounts, functions and object storage through the API, the CLI, wrangler and workerd bindings
  // (not the store suites, which run both backends themselves, the Miniflare fidelity comparisons, or
  // test/storage/durability, which is about SQLite's WAL under kill -9). Not the suites of the runtime's
  // processes either (workers/runtime: supervision and generations; workers/isolation: CPU and memory
  // limits; workers/tail: sessions and events, held in memory): nothing they check is kept in the database,
  // so a second run on PostgreSQL repeated ~65 s of workerd start-ups and tests nothing more.
  'test/accounts/{auth,user-memberships,tokens-members}.test.ts',
  'test/workers/{api,bad-input,cli,delete,endpoints,hostile-bindings,large-objects,r2-cache,r2-list-cache,request-history,routing,tutorial,wrangler}.test.ts',
  // Durable Object namespaces and migration tags are records: their rules again on PostgreSQL.
  'test/workers/durable-objects/migrations.test.ts',
  // Workflows' records (registration, paging, tenancy) again on PostgreSQL.
  'test/workflows/api.test.ts',
  'test/r2/{buckets-api,cli,cors,lifecycle,objects-api,public-buckets,temp-credentials,wire-backend,workerd-binding,wrangler-objects,wrangler-bucket-info}.test.ts',
  // The S3 API with the SDK (the tool suites, CLI and rclone/s3cmd, run on SQLite only: they test the clients).
  'test/s3/{sdk-objects,sdk-auth,streaming,multipart,three-doors,temp-credentials-cors,bad-input,sse-c}.test.ts',
  // Records in PostgreSQL and blobs on S3 (Swift): the scale-out setup.
  'test/r2/s3-blobs-e2e.test.ts',
  // The API's shared behaviour (envelopes, paging, bad input), egress checks, orphan
  // collection, and servers started as processes (restart, signals, the first hour).
  'test/api/{core,pagination,hardening-bad-input,hardening-bodies}.test.ts',
  'test/egress/api.test.ts',
  // D1's records on PostgreSQL: the API (its migration, names unique per account) and bindings checked at deploy.
  'test/d1/{api,binding}.test.ts',
  'test/workers/orphans.test.ts',
  'test/workers/assets/upload-protocol.test.ts',
  'test/server/{lifecycle,stopping}.test.ts',
  'test/cli/{first-hour,foundation}.test.ts',
  // Dashboard sessions live in the database.
  'test/dashboard/server.test.ts',
  // Workers KV namespaces are records in the database.
  'test/kv/{api,binding}.test.ts',
  'test/queues/{api,binding}.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 3,
    // A worker runs its files one after another in one process with one module cache: each file no
    // longer loads the server's modules anew. What files change of the process is theirs to undo; the
    // environment is restored after each file by restore-env.ts.
    isolate: false,
    setupFiles: ['./test/helpers/restore-env.ts'],
    // One throwaway PostgreSQL 15 cluster for the run (each test makes its own database on it).
    globalSetup: ['./test/helpers/postgres-global-setup.ts'],
    // Ceilings, not bounds: tests wait for events, and the heaviest (1,000 pools through the CLI, 60 MiB of
    // logs, three nodes on Swift) took over 60 s with the machine loaded ten times over its cores. A test that
    // hangs still fails, later.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    env: { LEDGE_LOG_LEVEL: 'warn' },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      // Everything, on the embedded default.
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts', 'src/**/*.test.ts'] } },
      // The API and end-to-end tests of every subsystem again, each server on a PostgreSQL database of its own.
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES_SUITES,
          // Store conformance suites run on both backends by themselves.
          exclude: ['**/stores.test.ts', '**/node_modules/**'],
          env: { LEDGE_LOG_LEVEL: 'warn', LEDGE_TEST_DATABASE: 'postgres' },
        },
      },
    ],
  },
});
