import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY, cleanEnv, cliEnv, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';
import { poll, waitFor } from '../helpers/wait.ts';

const versioned = (tag: string) => `export default { fetch() { return new Response(${JSON.stringify(tag)}); } };`;

describe('functions runtime (workerd supervisor)', () => {
  let ledge: TestLedge;
  let sub: string;
  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    sub = await accountSubdomain(ledge);
    await uploadScript(ledge, 'swap', { modules: { 'index.js': versioned('v0') } });
    await enableWorkersDev(ledge, 'swap');
  });
  afterAll(async () => ledge?.close());

  /**
   * Redeploys during a steady load of 16 concurrent clients, with and without keep-alive. New
   * connections only ever reach the new generation (steered SO_REUSEPORT sockets), so fresh
   * connections never fail. The retiring generation finishes its requests in flight and closes its
   * keep-alive connections; a client whose next request crosses that close sees it before any answer,
   * on a reused socket, which HTTP clients retry (RFC 9112 9.3.1; Node exposes `reusedSocket` for it).
   */
  for (const keepAlive of [false, true]) {
    it(`fails no request while redeploys swap workerd generations under load (keep-alive: ${keepAlive})`, async () => {
      const host = `swap.${sub}.localhost`;
      // Without keep-alive the pool must be unbounded: a bounded Node Agent sends `Connection: keep-alive`
      // anyway and hands a freed socket to the next queued request, so "keep-alive: false" would reuse
      // connections now and then. Unbounded, every request sends `Connection: close` on its own socket.
      const agent = keepAlive ? new Agent({ keepAlive, maxSockets: 16 }) : new Agent({ keepAlive: false });
      const seen = new Set<string>();
      const failures: string[] = [];
      let total = 0;
      let retried = 0;
      let running = true;
      const worker = async () => {
        while (running) {
          for (let attempt = 0; ; attempt++) {
            try {
              const res = await callFunction(functionsPort(ledge), host, '/', { agent });
              total++;
              if (res.status !== 200) failures.push(`status ${res.status}: ${res.text}`);
              else seen.add(res.text);
              break;
            } catch (error) {
              const reused = (error as { reusedSocket?: boolean }).reusedSocket === true;
              // Each retry may land on another pooled socket of the same retiring generation.
              if (reused && attempt < 16) {
                retried++;
                continue;
              }
              failures.push(`${(error as Error).message} (reused socket: ${reused}, attempt ${attempt})`);
              break;
            }
          }
        }
      };
      const load = Array.from({ length: 16 }, worker);
      const tags = keepAlive ? ['k1', 'k2', 'k3'] : ['v1', 'v2', 'v3'];
      // Load windows counted in requests served (real I/O), not in ms: each generation serves 60 of them.
      const served = (count: number) => {
        const from = total;
        return waitFor(() => total >= from + count, `${count} requests under load`, { everyMs: 10 });
      };
      for (const tag of tags) {
        await served(60);
        const up = await uploadScript(ledge, 'swap', { modules: { 'index.js': versioned(tag) } });
        expect(up.status).toBe(200);
      }
      await served(60);
      running = false;
      await Promise.all(load);
      agent.destroy();
      expect(failures).toEqual([]);
      expect(total).toBeGreaterThan(100);
      expect(tags.every((t) => seen.has(t))).toBe(true);
      // A fresh connection per request is never closed unanswered: new connections reach only the new generation.
      if (!keepAlive) expect(retried).toBe(0);
      expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe(tags[2]);
    });
  }

  it('spreads connections over the processes of a generation: each is its own isolate', async () => {
    // Each request keeps its isolate's only thread busy for a while (a counted loop: the Workers clock
    // stands still during a request), so while one process runs it, the other accepts the next
    // connections: concurrent requests must be served by both. Random values are refused at global
    // scope, hence the lazy id.
    // The only script on the server runs in every process of the generation (with several, each script runs
    // in a process of its own behind the front: failure-domains.test.ts).
    const swapRoute = `/accounts/${ledge.accountId}/workers/scripts/swap/subdomain`;
    expect((await api(ledge, 'POST', swapRoute, { enabled: false })).status).toBe(200);
    const source = `let isolate; export default { fetch() { let x = 0; for (let i = 0; i < 3e7; i++) x += i; isolate ??= crypto.randomUUID(); return new Response(x > 0 ? isolate : ''); } };`;
    expect((await uploadScript(ledge, 'isolates', { modules: { 'index.js': source } })).status).toBe(200);
    await enableWorkersDev(ledge, 'isolates');
    expect(ledge.server.platform.functions.runtime.pids).toHaveLength(2);
    const answers = await Promise.all(
      Array.from({ length: 24 }, () =>
        callFunction(functionsPort(ledge), `isolates.${sub}.localhost`, '/', {
          agent: new Agent({ keepAlive: false }),
        }),
      ),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.text)).size).toBe(2);
    expect((await api(ledge, 'POST', swapRoute, { enabled: true })).status).toBe(200);
  });

  it('keeps answering when one process of the generation dies, and replaces the generation', async () => {
    const runtime = ledge.server.platform.functions.runtime;
    const before = runtime.pids;
    const host = `swap.${sub}.localhost`;
    // The last one: its socket is not index 0 of the port's group, so steering must find it by index.
    const victim = before.at(-1)!;
    process.kill(victim, 'SIGKILL');
    // Once it is gone (a connection it accepted while dying dies with it, as on any crash); from then on
    // every fresh connection reaches the survivor or waits on the dead process's socket for its successor.
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await poll(() => !alive(victim), { everyMs: 5 });
    const killedAt = Date.now();
    const failures: string[] = [];
    let answered = 0;
    // The survivor serves until the new generation takes over, which then retires it: 8 clients on fresh
    // connections, so some are always being accepted when that happens. None may be refused or dropped. They
    // go on until the new generation has taken over and 50 requests were answered (ceiling: 60 s, for a
    // supervisor that never replaces the generation).
    const replaced = () => runtime.pids.length === 2 && !runtime.pids.some((pid) => before.includes(pid));
    const client = async () => {
      while (!(replaced() && answered > 50) && Date.now() - killedAt < 60_000) {
        const res = await callFunction(functionsPort(ledge), host, '/', {
          agent: new Agent({ keepAlive: false }),
        }).catch((error: Error) => error);
        const at = `${Date.now() - killedAt} ms after the exit`;
        if (res instanceof Error) failures.push(`${res.message} (${at})`);
        else if (res.status !== 200) failures.push(`status ${res.status}: ${res.text} (${at})`);
        else answered++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(50);
    const after = runtime.pids;
    expect(after).toHaveLength(2);
    expect(after.some((pid) => before.includes(pid))).toBe(false);
  });

  it('restarts a killed workerd by itself', async () => {
    const runtime = ledge.server.platform.functions.runtime;
    const pids = runtime.pids;
    const host = `swap.${sub}.localhost`;
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    const answeredAt =
      (await poll(
        async () => {
          const res = await callFunction(functionsPort(ledge), host, '/', {
            agent: new Agent({ keepAlive: false }),
          }).catch(() => undefined); // refused or reset while no generation accepts: keep polling
          return res?.status === 200 && Date.now();
        },
        { timeoutMs: 30_000, everyMs: 10 },
      )) ?? 0;
    // How soon is a figure (bench/functions/recovery.ts), not a bound here.
    expect(answeredAt, 'the function never answered again').toBeGreaterThan(0);
    console.log(`runtime: answered again ${answeredAt - killedAt} ms after SIGKILL`);
    // The supervisor may learn that the new generation listens just after the test saw its answer.
    await poll(() => !runtime.pids.some((pid) => pids.includes(pid)), { timeoutMs: 30_000, everyMs: 10 });
    expect(runtime.pids.some((pid) => pids.includes(pid))).toBe(false);
  });

  it('keeps console.log output and streams it to `ledge tail`', async () => {
    const source = `export default { fetch(request) { const n = new URL(request.url).searchParams.get("n"); console.log("handled", n, { ok: true }); console.error("line\\ntwo"); return new Response("logged"); } };`;
    await uploadScript(ledge, 'chatty', { modules: { 'index.js': source } });
    await enableWorkersDev(ledge, 'chatty');
    const host = `chatty.${sub}.localhost`;

    // Live: subscribe first (the response headers mean the subscription exists), then call the function.
    const stream = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/chatty/tail`, {
      headers: ledge.tokenHeaders,
    });
    expect(stream.status).toBe(200);
    expect((await callFunction(functionsPort(ledge), host, '/?n=1')).text).toBe('logged');
    const reader = stream.body!.getReader();
    let text = '';
    while (text.split('\n').filter(Boolean).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const lines = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; message: string[] });
    expect(lines[0]).toMatchObject({ level: 'log', message: ['handled', '1', '{"ok":true}'] });
    expect(lines[1]).toMatchObject({ level: 'error', message: ['line\ntwo'] });

    // Kept: the log file holds both calls, and `ledge tail --history` prints them before following.
    await callFunction(functionsPort(ledge), host, '/?n=2');
    const tail = spawn(process.execPath, [CLI_ENTRY, 'tail', 'chatty', '--history', '4', '--json'], {
      env: { ...cleanEnv(), ...cliEnv(ledge), LEDGE_CONFIG_DIR: tempDir('ledge-cfg-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const printed: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: tail.stdout! }).on('line', (line) => {
          printed.push(line);
          if (printed.length === 4) resolve();
        });
        tail.once('exit', (code) => reject(new Error(`ledge tail exited early (${code})`)));
      });
      const messages = printed.map((l) => (JSON.parse(l) as { message: string[] }).message[1]);
      expect(messages).toEqual(['1', undefined, '2', undefined]);
    } finally {
      tail.kill('SIGTERM');
    }
  });

  it('honours the compatibility date: from 2022-08-04 list() returns custom metadata only when included', async () => {
    const bucket = await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'compat-bucket' });
    expect(bucket.status).toBe(200);
    const source = `export default { async fetch(request, env) {
      await env.B.put("k", "v", { customMetadata: { color: "blue" } });
      const plain = await env.B.list();
      const included = await env.B.list({ include: ["customMetadata"] });
      return Response.json({ plain: plain.objects[0].customMetadata ?? null, included: included.objects[0].customMetadata ?? null });
    } };`;
    const results: Record<string, unknown> = {};
    for (const date of ['2022-08-03', '2022-08-04']) {
      const name = `compat-${date.replaceAll('-', '')}`;
      const up = await uploadScript(ledge, name, {
        modules: { 'index.js': source },
        metadata: {
          compatibility_date: date,
          bindings: [{ name: 'B', type: 'r2_bucket', bucket_name: 'compat-bucket' }],
        },
      });
      expect(up.status, JSON.stringify(up.body.errors)).toBe(200);
      await enableWorkersDev(ledge, name);
      results[date] = JSON.parse((await callFunction(functionsPort(ledge), `${name}.${sub}.localhost`, '/')).text);
    }
    // Before r2_list_honor_include (2022-08-04) list() behaves as if both metadata kinds were included.
    expect(results['2022-08-03']).toEqual({ plain: { color: 'blue' }, included: { color: 'blue' } });
    // From then on a kind not included is empty, as on R2 (an empty object, not undefined).
    expect(results['2022-08-04']).toEqual({ plain: {}, included: { color: 'blue' } });
  });

  it('passes compatibility flags to workerd: node:buffer loads only with nodejs_compat', async () => {
    const source =
      'import { Buffer } from "node:buffer"; export default { fetch() { return new Response(Buffer.from("aGk=", "base64").toString()); } };';
    const without = await uploadScript(ledge, 'flags', { modules: { 'index.js': source } });
    expect(without.status).toBe(400);
    expect(without.body.errors[0]!.message).toMatch(/node:buffer/);
    const withFlag = await uploadScript(ledge, 'flags', {
      modules: { 'index.js': source },
      metadata: { compatibility_flags: ['nodejs_compat'] },
    });
    expect(withFlag.status, JSON.stringify(withFlag.body.errors)).toBe(200);
    expect(withFlag.body.result.compatibility_flags).toEqual(['nodejs_compat']);
    await enableWorkersDev(ledge, 'flags');
    expect((await callFunction(functionsPort(ledge), `flags.${sub}.localhost`, '/')).text).toBe('hi');
  });
});
