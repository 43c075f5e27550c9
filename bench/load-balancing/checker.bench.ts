/**
 * The health checker keeping 2,000 real loopback HTTP origins at a 5 s interval. Measures the CPU of
 * the ledge process (API + checker + SQLite) over a window after one warm-up interval, probe lateness
 * against the schedule, and the probes the origins actually served.
 * Targets: < 25% of one core, no probe more than 1 s late, every origin healthy.
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_ACCOUNT, startBenchLedge } from './common.ts';

const ORIGINS = Number(process.env['BENCH_LB_ORIGINS'] ?? 2000);
const ORIGINS_PER_POOL = 10;
const INTERVAL_S = 5;
const WINDOW_S = Number(process.env['BENCH_LB_WINDOW'] ?? 30);

const child = fork(join(import.meta.dirname, 'origins-process.ts'), [String(ORIGINS)], {
  execPath: process.execPath,
  stdio: 'inherit',
});
const ask = <T>(type: string): Promise<T> =>
  new Promise((resolve) => {
    const listener = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', listener);
      resolve(message as T);
    };
    child.on('message', listener);
    if (type !== 'ports') child.send({ type });
  });
const { ports } = await ask<{ ports: number[] }>('ports');

const ledge = await startBenchLedge();
try {
  const lb = ledge.server.platform.loadBalancing;
  const monitor = await lb.monitors.create(BENCH_ACCOUNT, {
    interval: INTERVAL_S,
    timeout: 2,
    retries: 1,
    expected_codes: '2xx',
    expected_body: 'healthy',
  });
  for (let p = 0; p < ORIGINS / ORIGINS_PER_POOL; p++) {
    const origins = ports
      .slice(p * ORIGINS_PER_POOL, (p + 1) * ORIGINS_PER_POOL)
      .map((port, i) => ({ name: `o${i}`, address: '127.0.0.1', port }));
    await lb.pools.create(BENCH_ACCOUNT, { name: `bench-${p}`, monitor: monitor.id, origins });
  }
  // New origins are probed at once, then settle on random phases: measure after two intervals.
  await new Promise((r) => setTimeout(r, INTERVAL_S * 2000 + 500));
  lb.checker.resetStats();
  const servedBefore = (await ask<{ served: number }>('count')).served;
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - wallBefore;
  const servedAfter = (await ask<{ served: number }>('count')).served;
  const stats = lb.checker.stats();
  const unhealthy =
    (await ledge.server.platform.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM lb_origin_health WHERE healthy = 0'))
      ?.n ?? -1;
  const checkedRows =
    (await ledge.server.platform.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM lb_origin_health'))?.n ?? -1;
  const cpuPercent = ((cpu.user + cpu.system) / 1000 / wall) * 100;
  const result = {
    benchmark: 'health checker, real loopback origins',
    origins: stats.origins,
    interval_s: INTERVAL_S,
    window_s: WINDOW_S,
    cpu_percent_of_one_core: Math.round(cpuPercent * 10) / 10,
    probes_started: stats.probes,
    probes_expected: Math.round((ORIGINS * WINDOW_S) / INTERVAL_S),
    requests_served_by_origins: servedAfter - servedBefore,
    max_late_ms: Math.round(stats.maxLateMs * 10) / 10,
    probes_late_over_1s: stats.lateOver1s,
    skipped_overlapping: stats.skipped,
    origins_with_state: checkedRows,
    unhealthy_origins: unhealthy,
    target: 'cpu < 25% of one core, no probe > 1 s late, all healthy',
  };
  const pass = cpuPercent < 25 && stats.lateOver1s === 0 && unhealthy === 0 && checkedRows === ORIGINS;
  console.log(JSON.stringify({ ...result, pass }, null, 2));
  process.exitCode = pass ? 0 : 1;
} finally {
  await ledge.close();
  child.disconnect();
}
