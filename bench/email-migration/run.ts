/**
 * Benchmark: `ledge notifications migrate` on 10,000 pools with legacy emails, end to end.
 * Targets: <= 10 s and <= 200 MiB peak RSS for the tool. The server runs in its own process; the tool's
 * peak RSS is read from /proc/<pid>/status (VmHWM) while it runs.
 *
 *   npm run bench:email-migration [-- --pools 10000 --page-size 100]
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createPlatform, resolveServerConfig } from '../../src/server/index.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { CLI_ENTRY, cleanEnv, spawnLedge, tempDir, TEST_CREDENTIALS } from '../../test/helpers/ledge.ts';
import { systemClock } from '../../src/shared/clock.ts';

const { values } = parseArgs({
  options: { pools: { type: 'string', default: '10000' }, 'page-size': { type: 'string', default: '100' } },
});
const poolCount = Number(values.pools);
const pageSize = values['page-size'];
const dataDir = tempDir('ledge-bench-migration-');

// First boot creates the account; then the pools are seeded through the pools service itself.
const boot = await spawnLedge(dataDir);
await boot.stop();
const platform = await createPlatform(resolveServerConfig({ dataDir }), createLogger('warn', systemClock), systemClock);
const groups = [
  'ops@example.com',
  'oncall@example.com, ops@example.com',
  'dba@example.com',
  'net@example.com, sre@example.com',
];
const seedStart = performance.now();
for (let i = 0; i < poolCount; i++) {
  await platform.loadBalancing.pools.create(TEST_CREDENTIALS.accountId, {
    name: `pool-${String(i).padStart(6, '0')}`,
    origins: [{ name: 'o1', address: '192.0.2.10' }],
    notification_email: groups[i % groups.length],
  });
}
await platform.db.close();
console.log(`seeded ${poolCount} pools in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const server = await spawnLedge(dataDir);
try {
  const started = performance.now();
  const tool = spawn(process.execPath, [CLI_ENTRY, 'notifications', 'migrate', '--json', '--page-size', pageSize], {
    env: {
      ...cleanEnv(),
      LEDGE_API_URL: server.apiUrl,
      LEDGE_API_TOKEN: TEST_CREDENTIALS.apiToken,
      LEDGE_ACCOUNT_ID: TEST_CREDENTIALS.accountId,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let peakKiB = 0;
  const sample = () => {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${tool.pid}/status`, 'utf8'));
      if (hwm) peakKiB = Math.max(peakKiB, Number(hwm[1]));
    } catch {
      // the process has exited
    }
  };
  const sampler = setInterval(sample, 10);
  let stdout = '';
  tool.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => tool.on('exit', resolve));
  clearInterval(sampler);
  const wallMs = performance.now() - started;
  const report = JSON.parse(stdout);
  if (!Array.isArray(report.policies_created)) throw new Error(`the migration tool failed (exit ${code}): ${stdout}`);
  const result = {
    date: new Date().toISOString(),
    pools: poolCount,
    page_size: Number(pageSize),
    exit_code: code,
    complete: report.complete,
    policies_created: report.policies_created.length,
    pages_patched: report.pages_patched,
    tool_reported_ms: report.duration_ms,
    wall_ms_including_node_start: Math.round(wallMs),
    peak_rss_mib: Math.round(peakKiB / 1024),
    targets: { wall_ms: 10_000, peak_rss_mib: 200 },
    met: wallMs <= 10_000 && peakKiB / 1024 <= 200 && report.complete === true,
  };
  console.log(JSON.stringify(result, null, 2));
  if (!result.met) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
