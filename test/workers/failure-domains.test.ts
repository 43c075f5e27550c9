import { readFileSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ISOLATE_MEMORY_MIB, PROCESS_HEADROOM_MIB } from '../../src/workerd/limits.ts';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  storeBrokenVersion,
  tenant,
  uploadScript,
} from './helpers.ts';
import { poll } from '../helpers/wait.ts';

/**
 * Failure domains (docs/security.md): three accounts on one server. Whatever account C's scripts do while
 * they load, only C is affected; A and B deploy, change secrets and serve as if nothing happened.
 */
const START_TIMEOUT_MS = 3_000;
const MAX_SCRIPTS = 9;
const SUBREQUESTS = 5;

const MIB = 1024 * 1024;

function residentBytes(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}

const answering = (text: string) => `export default { fetch() { return new Response(${JSON.stringify(text)}); } };`;

/** Scripts that fail while they load, each in another way. */
const LOAD_FAILURES: Record<string, string> = {
  throws: `throw new Error('tenant C top-level failure');\nexport default { fetch() { return new Response('never'); } };`,
  'throws on the second read': `let reads = 0;
export default { get fetch() { if (++reads > 1) throw new Error('tenant C getter read ' + reads); return () => new Response('first read'); } };`,
  hangs: `for (;;) {}\nexport default { fetch() { return new Response('never'); } };`,
  'exhausts memory': `const kept = []; for (;;) kept.push(new Array(100000).fill({ n: 1 }));\nexport default { fetch() { return new Response('never'); } };`,
};

async function deploy(as: TestLedge, name: string, source: string, metadata: Record<string, unknown> = {}) {
  const uploaded = await uploadScript(as, name, { modules: { 'index.js': source }, metadata });
  expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return `${name}.${await accountSubdomain(as)}.localhost`;
}

/**
 * Calls the targets in a loop from `clients` keep-alive clients until stopped; collects every failure (an
 * error, another status than 200, or a text the target does not accept at that moment).
 */
function hammer(ledge: () => TestLedge, targets: { host: string; accept: () => string[] }[], clients = 4) {
  const failures: string[] = [];
  let served = 0;
  let running = true;
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const loops = Array.from({ length: clients }, async (_, index) => {
    while (running) {
      const target = targets[index % targets.length]!;
      const res = await callFunction(functionsPort(ledge()), target.host, '/', { agent }).catch((e: Error) => e);
      if (res instanceof Error) failures.push(`${target.host}: ${res.message}`);
      else if (res.status !== 200 || !target.accept().includes(res.text))
        failures.push(`${target.host}: ${res.status} ${res.text}`);
      else served++;
    }
  });
  return {
    failures,
    get served() {
      return served;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

describe('failure domains: one tenant cannot take the others down', () => {
  let ledge: TestLedge;
  let tenantB: TestLedge;
  let tenantC: TestLedge;
  let hostA: string;
  let hostB: string;
  let hostC: string;
  /** What A's and B's functions may answer now: the current text, and the next one while it deploys. */
  let textsA = ['alpha v1'];
  let textsB = ['bravo v1'];
  beforeAll(async () => {
    ledge = await startLedge({
      // Loopback for the subrequest test's origin (functions reach only the public internet by default).
      flags: { functionsProcesses: 2, egressAllow: '127.0.0.1/32' },
      env: {
        LEDGE_FUNCTIONS_START_TIMEOUT_MS: String(START_TIMEOUT_MS),
        LEDGE_MAX_SCRIPTS_PER_ACCOUNT: String(MAX_SCRIPTS),
        LEDGE_SUBREQUESTS_PER_INVOCATION: String(SUBREQUESTS),
      },
    });
    tenantB = await tenant(ledge, 'Bravo');
    tenantC = await tenant(ledge, 'Charlie');
    hostA = await deploy(ledge, 'alpha', answering(textsA[0]!));
    hostB = await deploy(tenantB, 'bravo', answering(textsB[0]!));
    hostC = await deploy(tenantC, 'charlie', answering('charlie v1'));
  });
  afterAll(async () => ledge?.close());

  it("answers each way a script can fail at load with a 400 naming that script alone, while C's previous version and A and B serve", async () => {
    const load = hammer(
      () => ledge,
      [
        { host: hostA, accept: () => textsA },
        { host: hostB, accept: () => textsB },
      ],
    );
    try {
      for (const [how, source] of Object.entries(LOAD_FAILURES)) {
        const started = Date.now();
        const failed = await uploadScript(tenantC, 'charlie', { modules: { 'index.js': source } });
        expect(failed.status, how).toBe(400);
        const message = failed.body.errors[0]!.message;
        expect(failed.body.errors[0]!.code, how).toBe(10021);
        expect(message, how).toContain('Worker "charlie" failed to start');
        expect(message, how).toContain('the previous deployment keeps serving');
        expect(message, how).not.toMatch(/alpha|bravo/);
        expect(Date.now() - started, how).toBeLessThan(START_TIMEOUT_MS + 10_000);
        // C's previous version keeps serving.
        const c = await callFunction(functionsPort(ledge), hostC, '/');
        expect(`${c.status} ${c.text}`, how).toBe('200 charlie v1');
        // A and B deploy as usual meanwhile, and their answers name nothing of C.
        const nextA = `alpha after ${how}`;
        textsA = [textsA.at(-1)!, nextA];
        const redeployA = await uploadScript(ledge, 'alpha', { modules: { 'index.js': answering(nextA) } });
        expect(redeployA.status, JSON.stringify(redeployA.body.errors)).toBe(200);
        expect(JSON.stringify(redeployA.body)).not.toContain('tenant C');
        textsA = [nextA];
        const nextB = `bravo after ${how}`;
        textsB = [textsB.at(-1)!, nextB];
        expect((await uploadScript(tenantB, 'bravo', { modules: { 'index.js': answering(nextB) } })).status).toBe(200);
        textsB = [nextB];
        expect(
          (
            await api(tenantB, 'PUT', `/accounts/${tenantB.accountId}/workers/scripts/bravo/secrets`, {
              name: 'TOKEN',
              text: how,
              type: 'secret_text',
            })
          ).status,
        ).toBe(200);
      }
    } finally {
      await load.stop();
    }
    expect(load.failures).toEqual([]);
    expect(load.served).toBeGreaterThan(20);
  });

  it('checks an upload with the wrapper and mode that serve it (a getter that fails on a later read is refused at upload)', async () => {
    const fresh = await uploadScript(tenantC, 'getter', {
      modules: { 'index.js': LOAD_FAILURES['throws on the second read']! },
    });
    expect(fresh.status).toBe(400);
    expect(fresh.body.errors[0]!.message).toContain('tenant C getter read');
    expect(fresh.body.errors[0]!.message).toMatch(/^Worker "getter" failed to start; nothing was deployed/);
    // Nothing was stored for it.
    expect((await api(tenantC, 'GET', `/accounts/${tenantC.accountId}/workers/scripts/getter`)).status).toBe(404);
  });

  it('reverts a secret its script cannot start with, and names only that script', async () => {
    const source = `if (process.env.MODE === 'broken') throw new Error('tenant C refuses MODE=broken');
export default { fetch() { return new Response('moody ' + (process.env.MODE ?? 'none')); } };`;
    const metadata = { compatibility_flags: ['nodejs_compat', 'nodejs_compat_populate_process_env'] };
    const host = await deploy(tenantC, 'moody', source, metadata);
    const secrets = `/accounts/${tenantC.accountId}/workers/scripts/moody/secrets`;
    expect((await api(tenantC, 'PUT', secrets, { name: 'MODE', text: 'calm', type: 'secret_text' })).status).toBe(200);
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('moody calm');

    const broken = await api(tenantC, 'PUT', secrets, { name: 'MODE', text: 'broken', type: 'secret_text' });
    expect(broken.status).toBe(400);
    expect(broken.body.errors[0]!.message).toMatch(/Worker "moody" failed to start;[^]*refuses MODE=broken/);
    expect(broken.body.errors[0]!.message).toContain('previous deployment keeps serving');
    // The secret is as it was, and so is what serves.
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('moody calm');
    const status = await api(tenantC, 'GET', `/accounts/${tenantC.accountId}/workers/runtime/scripts`);
    const moody = status.body.result.find((s: { script: string }) => s.script === 'moody');
    expect(moody.state).toBe('running');
    expect(moody.failure.reason).toContain('refuses MODE=broken');
  });

  it("ends each script at its own cpu_ms even when its account's other script has the default, answering every request in flight with 1102", async () => {
    const spin = await deploy(
      tenantC,
      'spin',
      `export default { fetch(request) {
        if (new URL(request.url).pathname === '/spin') { for (;;) {} }
        return new Response('spin ok');
      } };`,
      { limits: { cpu_ms: 200 } },
    );
    const calm = await deploy(tenantC, 'calm', answering('calm ok'));
    const port = functionsPort(ledge);
    const load = hammer(() => ledge, [{ host: calm, accept: () => ['calm ok'] }], 2);
    const started = Date.now();
    // Four at once: one spins, three wait behind it in the same isolate; all four are answered.
    const spins = await Promise.all(
      Array.from({ length: 4 }, () => callFunction(port, spin, '/spin').catch((e: Error) => e)),
    );
    const elapsed = Date.now() - started;
    await load.stop();
    for (const res of spins) {
      expect(res instanceof Error ? res.message : `${res.status} ${res.text}`).toBe('503 error code: 1102');
    }
    // Ended at its 200 ms of CPU, not at the 30 s of the account's other script (a ceiling well short of 30 s
    // that a busy machine does not reach).
    expect(elapsed).toBeLessThan(20_000);
    expect(load.failures).toEqual([]);
    // The script comes back by itself; how fast is a figure for bench/functions/recovery.ts, not a bound here.
    let res: Awaited<ReturnType<typeof callFunction>> | undefined;
    await poll(
      async () => {
        res = await callFunction(port, spin, '/').catch(() => undefined);
        return res?.text === 'spin ok';
      },
      { timeoutMs: 30_000 },
    );
    expect(res?.text).toBe('spin ok');
  });

  it("limits the subrequests of each invocation, with Cloudflare's error, whatever other invocations do", async () => {
    const origin = createServer((_, res) => res.end('origin'));
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/`;
    try {
      const host = await deploy(
        tenantC,
        'fanout',
        `export default { async fetch(request) {
          const n = Number(new URL(request.url).searchParams.get('n'));
          const outcomes = [];
          for (let i = 0; i < n; i++) {
            outcomes.push(await fetch(${JSON.stringify(url)}).then(() => 'fetched', (e) => e.message.includes('Too many subrequests.') ? 'limit' : 'other'));
          }
          return Response.json(outcomes);
        } };`,
      );
      const port = functionsPort(ledge);
      // Two invocations at once, each with its own count.
      const [first, second] = await Promise.all([
        callFunction(port, host, `/?n=${SUBREQUESTS + 2}`),
        callFunction(port, host, `/?n=${SUBREQUESTS}`),
      ]);
      const firstOutcomes = JSON.parse(first.text) as string[];
      expect(firstOutcomes.slice(SUBREQUESTS)).toEqual(['limit', 'limit']);
      expect(firstOutcomes.slice(0, SUBREQUESTS)).not.toContain('limit');
      expect(JSON.parse(second.text)).not.toContain('limit');
    } finally {
      origin.close();
    }
  });

  it('holds each isolate to 128 MiB however many scripts its account has', async () => {
    const hog = await deploy(
      tenantC,
      'hog',
      `const kept = [];
      export default { fetch(request) {
        if (new URL(request.url).pathname === '/buffers') for (;;) kept.push(new Uint8Array(1 << 20).fill(1));
        return new Response('hog ok ' + kept.length);
      } };`,
    );
    const runtime = ledge.server.platform.functions.runtime;
    expect(runtime.status(tenantC.accountId).size).toBeGreaterThanOrEqual(5);
    const [pid] = runtime.scriptPids(tenantC.accountId, 'hog');
    const baseline = residentBytes(pid!);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid!))), 10);
    const answer = await callFunction(functionsPort(ledge), hog, '/buffers');
    clearInterval(sampler);
    expect(`${answer.status} ${answer.text}`).toBe('503 error code: 1102');
    // One isolate's heap plus the process headroom (and what a loaded machine lets it allocate before the
    // watchdog's tick), not 128 MiB per script of the account (9 here: over 1 GiB).
    expect((peak - baseline) / MIB).toBeLessThan(ISOLATE_MEMORY_MIB + PROCESS_HEADROOM_MIB + 128);
  });

  it('limits the scripts of an account (Cloudflare 10037) and counts nothing of other accounts', async () => {
    const existing = (await api(tenantC, 'GET', `/accounts/${tenantC.accountId}/workers/scripts`)).body.result.length;
    for (let i = existing; i < MAX_SCRIPTS; i++) {
      expect((await uploadScript(tenantC, `filler-${i}`, { modules: { 'index.js': answering('f') } })).status).toBe(
        200,
      );
    }
    const over = await uploadScript(tenantC, 'one-too-many', { modules: { 'index.js': answering('x') } });
    expect(over.status).toBe(400);
    expect(over.body.errors[0]!.code).toBe(10037);
    expect(over.body.errors[0]!.message).toContain(`${MAX_SCRIPTS} Workers`);
    // A redeploy of an existing script is not a new script; another account is not limited by C's count.
    expect((await uploadScript(tenantC, 'filler-8', { modules: { 'index.js': answering('g') } })).status).toBe(200);
    expect((await uploadScript(tenantB, 'bravo-2', { modules: { 'index.js': answering('b2') } })).status).toBe(200);
  });
});

describe('failure domains: start-up never depends on tenant code', () => {
  let ledge: TestLedge;
  let tenantC: TestLedge;
  afterAll(async () => ledge?.close());

  it('quarantines a script that cannot load when the server starts: the server starts, the rest serve, it answers 503/1101 and shows why, and a deploy repairs it', async () => {
    const dataDir = tempDir();
    ledge = await startLedge({ dataDir, env: { LEDGE_FUNCTIONS_START_TIMEOUT_MS: String(START_TIMEOUT_MS) } });
    tenantC = await tenant(ledge, 'Charlie');
    const hostA = await deploy(ledge, 'alpha', answering('alpha ok'));
    const hostC = await deploy(tenantC, 'charlie', answering('charlie ok'));
    const hostD = await deploy(tenantC, 'doomed', answering('doomed ok'));
    // What a workerd upgrade or an older Ledge could leave behind: deployed versions that no longer load
    // (written through the store, as an upload that passed an older check would have been).
    for (const script of ['charlie', 'doomed'])
      await storeBrokenVersion(ledge.server.platform.functions.workers.store, tenantC.accountId, script);
    await ledge.close();

    ledge = await startLedge({ dataDir, env: { LEDGE_FUNCTIONS_START_TIMEOUT_MS: String(START_TIMEOUT_MS) } });
    tenantC = { ...tenantC, apiUrl: ledge.apiUrl, server: ledge.server };
    const port = functionsPort(ledge);
    expect((await callFunction(port, hostA, '/')).text).toBe('alpha ok');
    const plain = await callFunction(port, hostC, '/');
    expect(`${plain.status} ${plain.text}`).toBe('503 error code: 1101');
    const page = await callFunction(port, hostC, '/', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(page.text).toContain('Error 1101');
    expect(page.headers['content-type']).toContain('text/html');

    const status = await api(tenantC, 'GET', `/accounts/${tenantC.accountId}/workers/runtime/scripts`);
    expect(status.status).toBe(200);
    const byName = Object.fromEntries(status.body.result.map((s: { script: string }) => [s.script, s]));
    expect(byName.charlie.state).toBe('failed');
    expect(byName.charlie.failure.reason).toContain('stored broken version');
    // `ledge scripts` shows the same, with the reason.
    const tokenC = tenantC.tokenHeaders['authorization']!.replace('Bearer ', '');
    const cli = await runCli(['scripts'], { env: { ...cliEnv(tenantC), LEDGE_API_TOKEN: tokenC } });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/charlie\s+failed\s+\S+\s+.*stored broken version of charlie/);
    // Account A sees only its own scripts.
    const statusA = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/runtime/scripts`);
    expect(statusA.body.result).toEqual([expect.objectContaining({ script: 'alpha', state: 'running' })]);

    // A deploy repairs one, a delete the other.
    await uploadScript(tenantC, 'charlie', { modules: { 'index.js': answering('charlie fixed') } });
    expect((await callFunction(port, hostC, '/')).text).toBe('charlie fixed');
    expect((await api(tenantC, 'DELETE', `/accounts/${tenantC.accountId}/workers/scripts/doomed`)).status).toBe(200);
    const after = await api(tenantC, 'GET', `/accounts/${tenantC.accountId}/workers/runtime/scripts`);
    expect(after.body.result).toEqual([expect.objectContaining({ script: 'charlie', state: 'running' })]);
    expect((await callFunction(port, hostD, '/')).status).toBe(404);
  });
});
