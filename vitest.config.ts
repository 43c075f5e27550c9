import { defineConfig } from 'vitest/config';

// Integration tests start real servers (ledge, workerd, SMTP, origins) on 127.0.0.1 with port 0.
// Two workers match the two cores of the target machine; slow real-client tests get generous timeouts.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // One throwaway PostgreSQL 15 cluster for the run (each test makes its own database on it).
    globalSetup: ['./test/helpers/postgres-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { LEDGE_LOG_LEVEL: 'warn' },
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
