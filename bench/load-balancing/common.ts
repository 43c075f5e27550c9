import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveServerConfig, startServer, type RunningServer } from '../../src/server/index.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { benchDatabase, stopBenchDatabases } from '../database.ts';
import { systemClock } from '../../src/shared/clock.ts';

export const BENCH_TOKEN = 'bench-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
export const BENCH_ACCOUNT = '0123456789abcdef0123456789abcdef';

/** A real ledge server on 127.0.0.1 with a throwaway data dir; `close` removes it. */
export async function startBenchLedge(): Promise<{
  server: RunningServer;
  /** sqlite or postgres (`--database postgres`). */
  backend: string;
  headers: Record<string, string>;
  lbUrl: string;
  close(): Promise<void>;
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ledge-bench-'));
  const database = await benchDatabase();
  const config = resolveServerConfig(
    {
      dataDir,
      databaseUrl: database.databaseUrl,
      host: '127.0.0.1',
      port: 0,
      functionsPort: 0,
      trafficPort: 0,
      s3ApiPort: 0,
    },
    { LEDGE_BOOTSTRAP_API_TOKEN: BENCH_TOKEN, LEDGE_BOOTSTRAP_ACCOUNT_ID: BENCH_ACCOUNT },
  );
  const server = await startServer(config, createLogger('warn', systemClock), { clock: systemClock });
  return {
    server,
    backend: database.backend,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' },
    lbUrl: `${server.apiUrl}/accounts/${BENCH_ACCOUNT}/load_balancers`,
    close: async () => {
      await server.close();
      await database.stop();
      await stopBenchDatabases();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function summary(samples: number[]): { p50: number; p95: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? NaN),
  };
}
