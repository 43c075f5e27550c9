/**
 * The dashboard at scale: 10,000 pools, 100,000 objects in one bucket and 100,000 alert history rows in one
 * account. Times (over HTTP on loopback, so server time plus a little) the /client/v4 requests each dashboard page
 * makes, on first, middle and last pages, and with Chromium present (`/usr/bin/chromium`) the time the page takes
 * in the browser from navigation to its table on screen. Target: every request p95 under 200 ms.
 *
 *   node bench/dashboard/run.ts [--database postgres] [--objects N] [--pools N] [--history N]
 */
import { existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import { BENCH_ACCOUNT, BENCH_TOKEN, startBenchLedge, summary } from '../load-balancing/common.ts';

const flag = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
const POOLS = flag('pools', 10_000);
const OBJECTS = flag('objects', 100_000);
const HISTORY = flag('history', 100_000);
const ROUNDS = 50;

const ledge = await startBenchLedge();
try {
  const platform = ledge.server.platform;
  const api = `${ledge.server.apiUrl}/accounts/${BENCH_ACCOUNT}`;
  const seeded: Record<string, number> = {};
  const seed = async (what: string, fn: () => Promise<void>) => {
    const started = performance.now();
    await fn();
    seeded[`${what}_seconds`] = Math.round((performance.now() - started) / 100) / 10;
  };

  await seed('pools', async () => {
    for (let i = 0; i < POOLS; i++) {
      await platform.loadBalancing.pools.create(BENCH_ACCOUNT, {
        name: `pool-${String(i).padStart(5, '0')}`,
        notification_email: i % 2 === 0 ? 'ops@example.com' : '',
        origins: [{ name: 'a', address: `192.0.2.${i & 255}` }],
      });
    }
  });

  await seed('objects', async () => {
    const bucket = await platform.storage.buckets.create(BENCH_ACCOUNT, { name: 'big' });
    let next = 0;
    // 100 "folders" of 1,000 objects: the browser lists by prefix with the / delimiter.
    const worker = async () => {
      for (let i = next++; i < OBJECTS; i = next++) {
        const key = `folder-${String(i % 100).padStart(3, '0')}/object-${String(i).padStart(6, '0')}.txt`;
        await platform.storage.objects.put(bucket, key, Readable.from([Buffer.from(`object ${i}`)]), {
          httpMetadata: { contentType: 'text/plain' },
          customMetadata: {},
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  });

  await seed('history', async () => {
    const now = Date.now();
    for (let start = 0; start < HISTORY; start += 1000) {
      await platform.db.transaction(async (tx) => {
        for (let i = start; i < Math.min(start + 1000, HISTORY); i++) {
          await tx.run(
            `INSERT INTO notification_history (id, account_id, outbox_id, attempt, status, error, policy_id, name, alert_type,
               description, mechanism, mechanism_type, message_id, sent) VALUES (?, ?, ?, 1, ?, ?, NULL, ?, ?, ?, ?, 'email', NULL, ?)`,
            [
              `h${i}`,
              BENCH_ACCOUNT,
              i,
              i % 10 === 0 ? 'failed' : 'delivered',
              i % 10 === 0 ? 'connection refused' : null,
              'web health',
              'load_balancing_health_alert',
              'Pool web is Unhealthy',
              'ops@example.com',
              // Spread over the last 6 days, newest last.
              new Date(now - 6 * 86_400_000 + Math.floor((i / HISTORY) * 6 * 86_400_000)).toISOString(),
            ],
          );
        }
      });
    }
  });

  const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
  const time = async (
    path: string,
  ): Promise<{ ms: number; body: { result: unknown; result_info?: Record<string, unknown> } }> => {
    const started = performance.now();
    const response = await fetch(`${api}${path}`, { headers });
    const body = (await response.json()) as {
      success: boolean;
      result: unknown;
      result_info?: Record<string, unknown>;
    };
    const ms = performance.now() - started;
    if (!body.success) throw new Error(`${path}: ${JSON.stringify(body).slice(0, 300)}`);
    return { ms, body };
  };
  const measure = async (label: string, paths: () => string) => {
    for (let i = 0; i < 5; i++) await time(paths());
    const samples: number[] = [];
    for (let i = 0; i < ROUNDS; i++) samples.push((await time(paths())).ms);
    return [label, summary(samples)] as const;
  };

  const poolPages = Math.ceil(POOLS / 25);
  const since = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const historyPages = Math.ceil(HISTORY / 50);
  // A cursor deep in a folder: the browser's "Next page" after 5 pages.
  let cursor: string | undefined;
  for (let i = 0; i < 5; i++) {
    const page = await time(
      `/r2/buckets/big/objects?prefix=folder-050/&delimiter=/&per_page=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    cursor = page.body.result_info?.['cursor'] as string | undefined;
  }
  const requests = Object.fromEntries([
    await measure('pools: first page (25)', () => '/load_balancers/pools?page=1&per_page=25'),
    await measure(
      'pools: random page (25)',
      () => `/load_balancers/pools?page=${1 + Math.floor(Math.random() * poolPages)}&per_page=25`,
    ),
    await measure('pools: last page (25)', () => `/load_balancers/pools?page=${poolPages}&per_page=25`),
    await measure('legacy migration status (banner)', () => '/alerting/v3/legacy_migration'),
    await measure(
      'objects: bucket root (100 folders)',
      () => '/r2/buckets/big/objects?prefix=&delimiter=/&per_page=100',
    ),
    await measure(
      'objects: one folder, first page (100)',
      () => '/r2/buckets/big/objects?prefix=folder-050/&delimiter=/&per_page=100',
    ),
    await measure(
      'objects: one folder, 6th page by cursor',
      () =>
        `/r2/buckets/big/objects?prefix=folder-050/&delimiter=/&per_page=100&cursor=${encodeURIComponent(cursor ?? '')}`,
    ),
    await measure('history: first page (50)', () => `/alerting/v3/history?page=1&per_page=50&since=${since}`),
    await measure(
      'history: random page (50)',
      () => `/alerting/v3/history?page=${1 + Math.floor(Math.random() * historyPages)}&per_page=50&since=${since}`,
    ),
    await measure(
      'history: last page (50)',
      () => `/alerting/v3/history?page=${historyPages}&per_page=50&since=${since}`,
    ),
    // Before, the chart read up to 10 of these (and at 100,000 rows saw only the newest 10,000).
    await measure('history: one page of 1,000', () => `/alerting/v3/history?page=1&per_page=1000&since=${since}`),
    await measure('history chart: attempts per hour, 7 days', () => `/alerting/v3/history/hourly?since=${since}`),
    await measure('members (first page)', () => '/members?per_page=50'),
  ]);
  // Outside /accounts/{id}: the API Tokens page.
  const tokenSamples: number[] = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    const started = performance.now();
    const response = await fetch(`${ledge.server.apiUrl}/user/tokens?per_page=50`, { headers });
    if (!response.ok) throw new Error(`/user/tokens: ${response.status}`);
    await response.arrayBuffer();
    if (i >= 5) tokenSamples.push(performance.now() - started);
  }
  requests['tokens (first page)'] = summary(tokenSamples);

  const browser: Record<string, number> = {};
  if (existsSync('/usr/bin/chromium')) {
    const { chromium } = await import('playwright-core');
    const instance = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const page = await instance.newPage();
      const origin = new URL(ledge.server.apiUrl).origin;
      await page.goto(`${origin}/`);
      await page.getByLabel('API token').fill(BENCH_TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const view = async (label: string, hash: string, ready: string) => {
        const started = performance.now();
        await page.goto(`${origin}/${hash}`);
        await page
          .getByRole('table', { name: new RegExp(ready) })
          .locator('tbody tr')
          .first()
          .waitFor();
        browser[label] = Math.round(performance.now() - started);
      };
      await view(`Manage Pools (${POOLS} pools)`, '#/lb/pools', 'Pools');
      await view('object browser, bucket root', '#/r2/big', 'Objects in');
      await view('object browser, one folder', '#/r2/big?prefix=folder-050%2F', 'Objects in');
      await view('alert history (+ chart of 7 days)', '#/notifications/history', 'Alert history');
      await view('API Tokens', '#/tokens', 'API tokens');
      await view('Members', '#/members', 'Members of this account');
      await view(
        `email migration (${POOLS / 2} legacy pools)`,
        '#/notifications/migration',
        'Pools with a legacy email',
      );
    } finally {
      await instance.close();
    }
  }

  const worst = Math.max(...Object.values(requests).map((s) => s.p95));
  const result = {
    benchmark: 'dashboard pages at scale',
    database: ledge.backend,
    pools: POOLS,
    objects: OBJECTS,
    history_rows: HISTORY,
    seeded,
    request_ms: requests,
    browser_page_ms: browser,
    target: 'every request p95 < 200 ms',
    pass: worst < 200,
  };
  console.log(JSON.stringify(result, null, 2));
  process.exitCode = result.pass ? 0 : 1;
} finally {
  await ledge.close();
}
