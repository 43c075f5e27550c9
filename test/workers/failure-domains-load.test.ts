import { Agent } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  callFunction,
  enableWorkersDev,
  functionsPort,
  storeBrokenVersion,
  tenant,
  uploadScript,
} from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Failure domains under load: redeploys drain (no reset, no 5xx), and the chaos run of issue 26: while A and
 * B deploy and serve, C deploys a stream of scripts that fail in every way, then the server restarts.
 */
const START_TIMEOUT_MS = 3_000;

/** Answers GET with its text and PUT with the length of the body it read. */
const echo = (text: string) => `export default { async fetch(request) {
  if (request.method === 'PUT') return new Response(${JSON.stringify(text)} + ' ' + (await request.arrayBuffer()).byteLength);
  return new Response(${JSON.stringify(text)});
} };`;

const FAILING = [
  `throw new Error('chaos: throws');\nexport default {};`,
  `let n = 0;\nexport default { get fetch() { if (++n > 1) throw new Error('chaos: read ' + n); return () => new Response('x'); } };`,
  `if (Math.random() < 2) throw new Error('chaos: at random');\nexport default {};`,
  `for (;;) {}\nexport default {};`,
  `const kept = []; for (;;) kept.push(new Array(100000).fill({ n: 1 }));\nexport default {};`,
];

async function deploy(as: TestLedge, name: string, source: string) {
  const uploaded = await uploadScript(as, name, { modules: { 'index.js': source } });
  expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return `${name}.${await accountSubdomain(as)}.localhost`;
}

interface Target {
  host: string;
  /** Texts it may answer now (the previous and the next version while one deploys). */
  accept: string[];
}

/** `clients` keep-alive clients, each calling its target with GET and PUT in turn until stopped. */
function load(ledge: () => TestLedge, targets: Target[], clients: number) {
  const failures: string[] = [];
  const counts = { requests: 0 };
  let running = true;
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const body = Buffer.alloc(1024, 7);
  const loops = Array.from({ length: clients }, async (_, index) => {
    const target = targets[index % targets.length]!;
    for (let i = 0; running; i++) {
      const put = i % 3 === 2;
      const res = await callFunction(functionsPort(ledge()), target.host, '/', {
        agent,
        ...(put ? { method: 'PUT', body } : {}),
      }).catch((e: Error) => e);
      counts.requests++;
      if (res instanceof Error) {
        failures.push(`${target.host}: ${res.message}`);
        continue;
      }
      const text = put ? res.text.replace(/ 1024$/, '') : res.text;
      if (res.status !== 200 || !target.accept.includes(text))
        failures.push(`${target.host}: ${res.status} ${res.text}`);
    }
  });
  return {
    failures,
    counts,
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

describe('failure domains under load', () => {
  let ledge: TestLedge;
  afterAll(async () => ledge?.close());

  it('drains a redeploy: 200 clients of three accounts see no reset and no 5xx, and the new version serves at once', async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    const tenantB = await tenant(ledge, 'Bravo');
    const tenantC = await tenant(ledge, 'Charlie');
    const a: Target = { host: await deploy(ledge, 'alpha', echo('alpha')), accept: ['alpha'] };
    const b: Target = { host: await deploy(tenantB, 'bravo', echo('bravo')), accept: ['bravo'] };
    const c: Target = { host: await deploy(tenantC, 'charlie', echo('charlie 0')), accept: ['charlie 0'] };
    const running = load(() => ledge, [a, b, c], 200);
    // Load windows are counted in requests served (real I/O), not in ms.
    const served = (count: number) => {
      const from = running.counts.requests;
      return waitFor(() => running.counts.requests >= from + count, `${count} requests under load`);
    };
    await served(400);
    for (let version = 1; version <= 3; version++) {
      const text = `charlie ${version}`;
      c.accept = [c.accept.at(-1)!, text];
      const redeploy = await uploadScript(tenantC, 'charlie', { modules: { 'index.js': echo(text) } });
      expect(redeploy.status).toBe(200);
      // The new version serves from the moment the deploy answers (no old code after that).
      const first = await callFunction(functionsPort(ledge), c.host, '/');
      expect(first.text).toBe(text);
      c.accept = [text];
      await served(200);
    }
    await running.stop();
    console.log(
      `drain: ${running.counts.requests} requests by 200 clients over 3 redeploys, ${running.failures.length} failed`,
    );
    expect(running.failures).toEqual([]);
    expect(running.counts.requests).toBeGreaterThan(600);
  });
});

describe('failure domains: chaos', () => {
  let ledge: TestLedge;
  afterAll(async () => ledge?.close());

  it('A and B deploy and serve without one failure while C deploys every kind of broken script, and the server restarts', async () => {
    const dataDir = tempDir();
    const env = { LEDGE_FUNCTIONS_START_TIMEOUT_MS: String(START_TIMEOUT_MS) };
    ledge = await startLedge({ dataDir, env });
    const tenantB = await tenant(ledge, 'Bravo');
    let tenantC = await tenant(ledge, 'Charlie');
    const a: Target = { host: await deploy(ledge, 'alpha', echo('alpha 0')), accept: ['alpha 0'] };
    const b: Target = { host: await deploy(tenantB, 'bravo', echo('bravo 0')), accept: ['bravo 0'] };
    const hostC = await deploy(tenantC, 'charlie', echo('charlie ok'));

    const running = load(() => ledge, [a, b], 8);
    let chaosDeploys = 0;
    const failedDeploys: string[] = [];
    const chaos = (async () => {
      for (let round = 0; round < 2; round++) {
        for (const source of FAILING) {
          const name = `chaos-${chaosDeploys++ % 3}`;
          const answer = await uploadScript(tenantC, name, { modules: { 'index.js': source } });
          if (answer.status !== 400) failedDeploys.push(`C ${name}: expected 400, got ${answer.status}`);
        }
      }
    })();
    const steady = (async () => {
      for (let version = 1; version <= 6; version++) {
        for (const [as, target, name] of [
          [ledge, a, 'alpha'],
          [tenantB, b, 'bravo'],
        ] as const) {
          const text = `${name} ${version}`;
          target.accept = [target.accept.at(-1)!, text];
          const answer = await uploadScript(as, name, { modules: { 'index.js': echo(text) } });
          if (answer.status !== 200)
            failedDeploys.push(`${name}: ${answer.status} ${JSON.stringify(answer.body.errors)}`);
          target.accept = [text];
        }
      }
    })();
    await Promise.all([chaos, steady]);
    await running.stop();
    expect(failedDeploys).toEqual([]);
    expect(running.failures).toEqual([]);
    expect(chaosDeploys).toBe(FAILING.length * 2);

    // A broken version is left deployed (as an older check could have let through), and the server restarts.
    await storeBrokenVersion(ledge.server.platform.functions.workers.store, tenantC.accountId, 'charlie');
    await ledge.close();
    ledge = await startLedge({ dataDir, env });
    tenantC = { ...tenantC, apiUrl: ledge.apiUrl, server: ledge.server };
    const port = functionsPort(ledge);
    expect((await callFunction(port, a.host, '/')).text).toBe('alpha 6');
    expect((await callFunction(port, b.host, '/')).text).toBe('bravo 6');
    expect((await callFunction(port, hostC, '/')).status).toBe(503);
    const after = load(() => ledge, [a, b], 4);
    // 40 requests of A and B after the restart (real I/O, not ms).
    await waitFor(() => after.counts.requests >= 40, '40 requests after the restart');
    await after.stop();
    expect(after.failures).toEqual([]);
  });
});
