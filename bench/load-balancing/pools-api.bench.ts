/**
 * 10,000 pools in one account: p50 of one page of GET /pools and of one page of bulk PATCH /pools
 * (default page size 25, random pages), over HTTP against a real server. Target: p50 <= 20 ms each.
 */
import { BENCH_ACCOUNT, startBenchLedge, summary } from './common.ts';

const POOLS = 10_000;
const ROUNDS = 300;

const ledge = await startBenchLedge();
try {
  const lb = ledge.server.platform.loadBalancing;
  const seedStart = performance.now();
  for (let i = 0; i < POOLS; i++) {
    await lb.pools.create(BENCH_ACCOUNT, {
      name: `pool-${String(i).padStart(5, '0')}`,
      notification_email: i % 2 === 0 ? 'ops@example.com' : '',
      origins: [
        { name: 'a', address: `192.0.2.${i & 255}` },
        // A name origin, resolved by the egress check at create: one this machine resolves without a DNS
        // server (only the npm registry is reachable here; a name sent to the resolver costs seconds).
        { name: 'b', address: 'localhost', weight: 0.5 },
      ],
    });
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const pages = POOLS / 25;
  const timed = async (method: string, url: string, body?: unknown): Promise<number> => {
    const started = performance.now();
    const res = await fetch(url, {
      method,
      headers: ledge.headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; result: unknown[] };
    const elapsed = performance.now() - started;
    if (!json.success || json.result.length !== 25)
      throw new Error(`${method} ${url} failed: ${JSON.stringify(json).slice(0, 200)}`);
    return elapsed;
  };
  // Warm-up: statement cache, JIT, connections.
  for (let i = 0; i < 30; i++) await timed('GET', `${ledge.lbUrl}/pools?page=${1 + (i % pages)}`);
  const get: number[] = [];
  const patch: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const page = 1 + Math.floor(Math.random() * pages);
    get.push(await timed('GET', `${ledge.lbUrl}/pools?page=${page}`));
    patch.push(
      await timed('PATCH', `${ledge.lbUrl}/pools?page=${page}`, {
        notification_email: i % 2 === 0 ? '' : 'ops@example.com',
      }),
    );
  }
  const lastPage = await timed('GET', `${ledge.lbUrl}/pools?page=${pages}`);
  const result = {
    benchmark: 'pools API with 10,000 pools',
    database: ledge.backend,
    seeded_pools: POOLS,
    seed_seconds: Math.round(seedSeconds * 10) / 10,
    rounds: ROUNDS,
    get_page_ms: summary(get),
    bulk_patch_page_ms: summary(patch),
    last_page_get_ms: Math.round(lastPage * 100) / 100,
    target: 'p50 <= 20 ms for each',
  };
  const pass = result.get_page_ms.p50 <= 20 && result.bulk_patch_page_ms.p50 <= 20;
  console.log(JSON.stringify({ ...result, pass }, null, 2));
  process.exitCode = pass ? 0 : 1;
} finally {
  await ledge.close();
}
