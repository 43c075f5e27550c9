// Benchmark: deploying static assets with the real wrangler (4.x, from npm) to Ledge. A first deploy of
// 1,000 new files and a redeploy with one changed file, each timed three ways: wrangler's whole run (what a
// user waits, including wrangler's own start), wrangler's start (process start to its first API call), and
// Ledge's share: the time during which one of the deploy's calls (the upload session, the uploads, the
// script upload) was in flight at a timing proxy between wrangler and Ledge (overlapping uploads count
// once). The rest of the whole run is wrangler's own work. Prints a table and the JSON of every round.
// `--root <checkout>` runs the Ledge of another checkout (its own node_modules), for a before/after.
// Usage: npm run bench:assets:deploy [-- --rounds 3 --files 1000 --root /tmp/ledge-base]
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { numberArgument } from '../arguments.ts';
import { stop } from '../functions/processes.ts';
import { benchWorkDir, getWithHost, startBenchLedge, WRANGLER, wranglerEnv } from './ledge.ts';
import { busyMs, startTimingProxy, type TimedCall } from './timing-proxy.ts';

const ROUNDS = numberArgument('--rounds', 3);
const FILES = numberArgument('--files', 1000);

interface Figures {
  wranglerMs: number;
  wranglerStartMs: number;
  ledgeMs: number;
  ledgeAllCallsMs: number;
  calls: number;
  uploads: number;
  /** Ledge's share by call: the session, the uploads (busy time), the script upload. */
  sessionMs: number;
  uploadMs: number;
  scriptMs: number;
  /**
   * Redeploy: from the script upload's first byte (at the proxy) to the first GET answered with the changed
   * file's new bytes, polled every POLL_MS on a fresh connection while wrangler runs.
   */
  servingMs?: number;
}

const POLL_MS = 20;

interface Watch {
  port: number;
  host: string;
  path: string;
  expected: string;
}

/** Polls the functions port until `watch.path` answers `watch.expected`; resolves with when (performance.now()). */
function watchForNewVersion(watch: Watch): { seen: Promise<number>; stop(): void } {
  let stopped = false;
  const seen = (async () => {
    while (!stopped) {
      const res = await getWithHost(watch.port, watch.host, watch.path).catch(() => undefined);
      if (res?.body === watch.expected) return performance.now();
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return Number.NaN;
  })();
  return { seen, stop: () => (stopped = true) };
}

/** A site of FILES small files (0.5 to 8 KiB of random text, in 20 folders) and a Worker in front. */
function writeSite(root: string, name: string): void {
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'src/index.js'), 'export default { fetch() { return new Response("worker"); } };\n');
  writeFileSync(
    join(root, 'wrangler.jsonc'),
    JSON.stringify({ name, main: 'src/index.js', compatibility_date: '2025-06-01', assets: { directory: './public' } }),
  );
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, 'public', `section-${i % 20}`);
    mkdirSync(dir, { recursive: true });
    const size = 512 + ((i * 7919) % (8 * 1024 - 512));
    writeFileSync(
      join(dir, `page-${i}.html`),
      randomBytes(Math.ceil(size / 2))
        .toString('hex')
        .slice(0, size),
    );
  }
}

/** The script upload: `PUT .../scripts/{name}` (wrangler's first deploy) or `POST .../versions` (its redeploy). */
const isScriptUpload = (c: TimedCall) =>
  (c.method === 'PUT' && /\/workers\/scripts\/[^/]+$/.test(c.path)) ||
  (c.method === 'POST' && c.path.endsWith('/versions'));
const isDeployCall = (c: TimedCall) =>
  c.path.endsWith('/assets-upload-session') || c.path.endsWith('/workers/assets/upload') || isScriptUpload(c);

async function deploy(
  cwd: string,
  proxy: { url: string; calls: TimedCall[] },
  home: string,
  watch?: Watch,
): Promise<Figures> {
  proxy.calls.length = 0;
  const watcher = watch ? watchForNewVersion(watch) : undefined;
  const started = performance.now();
  const { stdout } = await promisify(execFile)(process.execPath, [WRANGLER, 'deploy'], {
    cwd,
    env: wranglerEnv(proxy.url, home),
    maxBuffer: 16 << 20,
  });
  const wranglerMs = performance.now() - started;
  // wrangler has finished the deployment: the new version answers within a few polls, or never.
  const stopWatching = setTimeout(() => watcher?.stop(), 5_000);
  const seenAt = watcher ? await watcher.seen : Number.NaN;
  clearTimeout(stopWatching);
  const calls = [...proxy.calls];
  if (process.argv.includes('--calls'))
    for (const c of calls)
      process.stderr.write(
        `${c.method} ${c.path} ${c.status} ${(c.startMs - started).toFixed(0)}+${(c.endMs - c.startMs).toFixed(0)} ms\n`,
      );
  const failed = calls.filter((c) => c.status >= 400 && c.status !== 404);
  if (failed.length > 0) throw new Error(`failed calls: ${JSON.stringify(failed)}\n${stdout}`);
  const uploaded = /Success! Uploaded (\d+) files?/.exec(stdout);
  if (process.argv.includes('--verbose')) process.stderr.write(stdout);
  return {
    wranglerMs,
    wranglerStartMs: Math.min(...calls.map((c) => c.startMs)) - started,
    ledgeMs: busyMs(calls.filter(isDeployCall)),
    ledgeAllCallsMs: busyMs(calls),
    calls: calls.length,
    uploads: uploaded ? Number(uploaded[1]) : 0,
    sessionMs: busyMs(calls.filter((c) => c.path.endsWith('/assets-upload-session'))),
    uploadMs: busyMs(calls.filter((c) => c.path.endsWith('/workers/assets/upload'))),
    scriptMs: busyMs(calls.filter(isScriptUpload)),
    ...(watch ? { servingMs: seenAt - Math.min(...calls.filter(isScriptUpload).map((c) => c.startMs)) } : {}),
  };
}

async function main() {
  const work = benchWorkDir();
  const root = process.argv.includes('--root') ? process.argv[process.argv.indexOf('--root') + 1] : undefined;
  const ledge = await startBenchLedge(work.dir, root);
  const proxy = await startTimingProxy(ledge.apiPort);
  const rounds: { first: Figures; redeploy: Figures }[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const name = `assets-bench-${round}`;
      const site = join(work.dir, name);
      writeSite(site, name);
      const home = join(work.dir, `home-${round}`);
      mkdirSync(home);
      const first = await deploy(site, proxy, home);
      writeFileSync(join(site, 'public/section-3/page-3.html'), `changed in round ${round}`);
      const redeploy = await deploy(site, proxy, home, {
        port: ledge.fnPort,
        host: await ledge.host(name),
        path: '/section-3/page-3',
        expected: `changed in round ${round}`,
      });
      if (!Number.isFinite(redeploy.servingMs)) throw new Error('the redeploy was not served within 5 s of wrangler');
      // The redeploy is served: the changed file's new bytes answer from the functions port.
      const res = await getWithHost(ledge.fnPort, await ledge.host(name), '/section-3/page-3');
      if (res.body !== `changed in round ${round}`)
        throw new Error(`the redeploy is not served: ${res.status} ${res.body}`);
      if (first.uploads !== FILES || redeploy.uploads !== 1)
        throw new Error(`uploads: first ${first.uploads}, redeploy ${redeploy.uploads}`);
      rounds.push({ first, redeploy });
      process.stderr.write(`round ${round}: ${JSON.stringify({ first, redeploy })}\n`);
    }
  } finally {
    proxy.close();
    await stop(ledge.child);
    work.remove();
  }
  report(rounds);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function report(rounds: { first: Figures; redeploy: Figures }[]) {
  const out = (text: string) => process.stdout.write(text);
  const m = (kind: 'first' | 'redeploy', key: keyof Figures) => median(rounds.map((r) => r[kind][key] ?? Number.NaN));
  out(
    `\nAssets deploy benchmark, ${new Date().toISOString()} (wrangler 4 deploy, ${FILES} files of 0.5-8 KiB; medians of ${ROUNDS} rounds)\n\n`,
  );
  out(
    '| deploy | wrangler, whole run | wrangler start | Ledge: session + uploads + script upload | Ledge: every call (+ deployment, runtime start) | target (Ledge) | met |\n',
  );
  out('|---|---|---|---|---|---|---|\n');
  const row = (label: string, kind: 'first' | 'redeploy', target: number) => {
    const ledgeMs = m(kind, 'ledgeMs');
    const allMs = m(kind, 'ledgeAllCallsMs');
    out(
      `| ${label} | ${m(kind, 'wranglerMs').toFixed(0)} ms | ${m(kind, 'wranglerStartMs').toFixed(0)} ms | ${ledgeMs.toFixed(0)} ms | ` +
        `${allMs.toFixed(0)} ms | < ${target} ms | ${ledgeMs < target ? 'yes' : 'NO'}${allMs < target ? ' (every call: yes)' : ' (every call: NO)'} |\n`,
    );
  };
  row(`first, ${FILES} files`, 'first', 5000);
  row('redeploy, 1 changed file', 'redeploy', 1000);
  const serving = median(rounds.map((r) => r.redeploy.servingMs ?? Number.NaN));
  out(
    `\nRedeploy, from the script upload's first byte to the new version serving (polled every ${POLL_MS} ms): ` +
      `${serving.toFixed(0)} ms (target < 1000 ms: ${serving < 1000 ? 'yes' : 'NO'}; rounds ` +
      `${rounds.map((r) => r.redeploy.servingMs?.toFixed(0)).join(' / ')})\n`,
  );
  out(`\n${JSON.stringify(rounds)}\n`);
}

await main();
