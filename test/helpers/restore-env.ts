import { afterAll } from 'vitest';

/**
 * Runs before every test file (vitest.config.ts `setupFiles`). The files share their worker's module
 * cache (`isolate: false`: loading the server's modules once per worker, not once per file, took a
 * third of some suites' time), so what a file sets in `process.env` at its top (a faster probe minimum,
 * shorter retries) is put back when the file ends instead of reaching the next file of the worker.
 */
const before = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in before)) delete process.env[name];
  Object.assign(process.env, before);
});
