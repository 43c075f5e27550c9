// How soon functions serve again after what the tests check only happens: every workerd process killed with
// SIGKILL, a runaway invocation ended at its cpu_ms, and a redeploy. The tests wait for each with a generous
// ceiling (a busy machine must not fail them); the time it takes is a figure, measured here on a quiet machine.
//
// Usage: node bench/functions/recovery.ts [--rounds 10]
// Prints one line per measure: median, p90 and max over the rounds (ms), then one JSON line with the samples.
import { request, Agent } from 'node:http';
import { join } from 'node:path';
import { numberArgument } from '../arguments.ts';
import type * as LedgeHelpers from '../../test/helpers/ledge.ts';

const ROOT = join(import.meta.dirname, '../..');
const rounds = numberArgument('--rounds', 10);

type TestLedge = Awaited<ReturnType<typeof LedgeHelpers.startLedge>>;

/** One request to a function by its host name, on a fresh connection; undefined when refused or reset. */
function call(port: number, host: string): Promise<{ status: number; text: string } | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: new Agent() }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Milliseconds until `host` answers 200 with `text`, asking every 5 ms (at most 60 s). */
async function msUntilServed(port: number, host: string, text: string, from = performance.now()): Promise<number> {
  const deadline = from + 60_000;
  for (;;) {
    const answer = await call(port, host);
    if (answer?.status === 200 && answer.text === text) return performance.now() - from;
    if (performance.now() > deadline) throw new Error(`${host} did not answer "${text}" within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function deploy(ledge: TestLedge, name: string, source: string, limits?: { cpu_ms: number }) {
  const form = new FormData();
  form.set(
    'metadata',
    JSON.stringify({ main_module: 'index.js', bindings: [], compatibility_date: '2025-01-01', limits }),
  );
  form.set('index.js', new File([source], 'index.js', { type: 'application/javascript+module' }));
  const path = `${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/${name}`;
  const uploaded = await fetch(path, { method: 'PUT', headers: ledge.tokenHeaders, body: form });
  if (uploaded.status !== 200) throw new Error(`deploy of ${name}: ${uploaded.status} ${await uploaded.text()}`);
  await uploaded.arrayBuffer();
  const routed = await fetch(`${path}/subdomain`, {
    method: 'POST',
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled: true }),
  });
  await routed.arrayBuffer();
}

const answering = (text: string) => `export default { fetch(request) {
  if (new URL(request.url).pathname === '/spin') { for (;;) {} }
  return new Response(${JSON.stringify(text)});
} };`;

function summary(name: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `${name}: median ${at(0.5).toFixed(0)} ms, p90 ${at(0.9).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms (${samples.length} rounds)`;
}

async function main() {
  const { startLedge } = (await import(join(ROOT, 'test/helpers/ledge.ts'))) as typeof LedgeHelpers;
  const ledge = await startLedge({ flags: { functionsProcesses: 2 } });
  try {
    const subdomain = (
      (await (
        await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/subdomain`, { headers: ledge.tokenHeaders })
      ).json()) as { result: { subdomain: string } }
    ).result.subdomain;
    const host = (script: string) => `${script}.${subdomain}.localhost`;
    const runtime = ledge.server.platform.functions.runtime;
    await deploy(ledge, 'steady', answering('steady v0'));
    await deploy(ledge, 'spin', answering('spin ok'), { cpu_ms: 200 });
    await msUntilServed(runtime.port!, host('steady'), 'steady v0');
    await msUntilServed(runtime.port!, host('spin'), 'spin ok');

    const killed: number[] = [];
    const runaway: number[] = [];
    const redeployed: number[] = [];
    let current = 'steady v0';
    for (let round = 1; round <= rounds; round++) {
      // Every workerd process killed at once: until the supervisor's next generation listens.
      for (const pid of runtime.pids) process.kill(pid, 'SIGKILL');
      killed.push(await msUntilServed(runtime.port!, host('steady'), current));

      // A runaway ended at its cpu_ms (1102): until the script answers again.
      await new Promise<void>((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: runtime.port!,
            path: '/spin',
            headers: { host: host('spin') },
            agent: new Agent(),
          },
          (res) => res.resume().on('end', () => resolve()),
        );
        req.on('error', () => resolve());
        req.end();
      });
      runaway.push(await msUntilServed(runtime.port!, host('spin'), 'spin ok'));

      // A redeploy: from the deploy's answer until the new version serves (the API answers once it does).
      const version = `steady v${round}`;
      await deploy(ledge, 'steady', answering(version));
      redeployed.push(await msUntilServed(runtime.port!, host('steady'), version));
      current = version;
    }
    console.log(summary('all workerd processes killed -> served again', killed));
    console.log(summary('runaway ended at cpu_ms -> served again', runaway));
    console.log(summary('redeploy answered -> new version served', redeployed));
    console.log(JSON.stringify({ killed, runaway, redeployed }));
  } finally {
    await ledge.close();
  }
}

await main();
