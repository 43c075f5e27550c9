import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, type LbCall } from '../load-balancing/helpers.ts';
import { startCountingServer, trickle, type CountingServer } from './servers.ts';
import { poll } from '../helpers/wait.ts';

/**
 * The egress policy through the API, as a tenant meets it: a refused target is a 400 with a v4 error
 * when a pool, a monitor, a preview or a webhook is written, and nothing is sent to it.
 */
const servers: CountingServer[] = [];
const ledges: TestLedge[] = [];
const env = { LEDGE_LB_MIN_INTERVAL: '1', LEDGE_NOTIFY_WEBHOOK_DEADLINE_MS: '1500' };

async function counting(...args: Parameters<typeof startCountingServer>): Promise<CountingServer> {
  const server = await startCountingServer(...args);
  servers.push(server);
  return server;
}

async function ledgeWith(options: Parameters<typeof startLedge>[0] = {}): Promise<TestLedge> {
  const ledge = await startLedge({ ...options, env: { ...env, ...options.env } });
  ledges.push(ledge);
  return ledge;
}

afterAll(async () => {
  for (const ledge of ledges) await ledge.close();
  for (const server of servers) await server.close();
});

async function webhook(ledge: TestLedge, url: string) {
  const response = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/alerting/v3/destinations/webhooks`, {
    method: 'POST',
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'hook', url }),
  });
  return { status: response.status, body: (await response.json()) as { errors: { code: number; message: string }[] } };
}

let originCount = 0;
const origin = (address: string, port?: number) => ({
  name: `o${++originCount}`,
  address,
  ...(port ? { port } : {}),
});
const poolBody = (name: string, origins: unknown[], monitor?: string) => ({
  name,
  origins,
  ...(monitor ? { monitor } : {}),
});

describe('default policy (local use)', () => {
  let ledge: TestLedge;
  let call: LbCall;
  let monitorId: string;

  beforeAll(async () => {
    ledge = await ledgeWith();
    call = lbClient(ledge);
    monitorId = (await call('POST', '/monitors', { interval: 1, timeout: 2, retries: 0 })).body.result.id;
  });

  it('allows a loopback origin on another port: pools, previews and probes reach it', async () => {
    const server = await counting();
    const created = await call('POST', '/pools', poolBody('loopback', [origin('127.0.0.1', server.port)], monitorId));
    expect(created.status).toBe(200);
    const preview = await call('POST', `/pools/${created.body.result.id}/preview`, { timeout: 2, retries: 0 });
    expect(preview.status).toBe(200);
    await poll(() => server.requests >= 2, { timeoutMs: 10_000 });
    expect(server.requests).toBeGreaterThanOrEqual(2);
  });

  it("refuses the API's and the functions' own ports: 400 with code 1002, by address and by name", async () => {
    const api = ledge.port;
    const functions = ledge.server.platform.functions.runtime.port!;
    const literal = await call('POST', '/pools', poolBody('own-api', [origin('127.0.0.1', api)], monitorId));
    expect(literal.status).toBe(400);
    expect(literal.body.errors).toEqual([
      {
        code: 1002,
        message: `origins[0].address: 127.0.0.1:${api} is refused by the egress policy (Ledge's own API listener): validation failed`,
      },
    ]);
    // Without a monitor the origin's own port is what would be reached.
    const noMonitor = await call('POST', '/pools', poolBody('own-api', [origin('localhost', api)]));
    expect(noMonitor.status).toBe(400);
    expect(noMonitor.body.errors[0]?.message).toBe(
      `origins[0].address: localhost resolves to 127.0.0.1:${api}, which the egress policy refuses (Ledge's own API listener): validation failed`,
    );
    const fn = await call('POST', '/pools', poolBody('own-fn', [origin('0.0.0.0'), origin('::1', functions)]));
    expect(fn.status).toBe(400);
    expect(fn.body.errors[0]?.message).toContain('origins[0].address: 0.0.0.0 is refused by the egress policy');
    const fnOnly = await call('POST', '/pools', poolBody('own-fn', [origin('::1', functions)]));
    expect(fnOnly.body.errors[0]?.message).toContain(
      `[::1]:${functions} is refused by the egress policy (Ledge's own functions listener)`,
    );
    expect((await call('GET', '/pools')).body.result.map((p: { name: string }) => p.name)).toEqual(['loopback']);
  });

  it('refuses a monitor change that would probe an own port, and a preview that would', async () => {
    const server = await counting();
    const monitor = (await call('POST', '/monitors', { interval: 60, retries: 0 })).body.result;
    const pool = (await call('POST', '/pools', poolBody('watched', [origin('127.0.0.1', server.port)], monitor.id)))
      .body.result;
    const patched = await call('PATCH', `/monitors/${monitor.id}`, { port: ledge.port });
    expect(patched.status).toBe(400);
    expect(patched.body.errors[0]).toEqual({
      code: 1002,
      message: `pool "watched": origins[0].address: 127.0.0.1:${ledge.port} is refused by the egress policy (Ledge's own API listener): validation failed`,
    });
    expect((await call('GET', `/monitors/${monitor.id}`)).body.result.port).toBe(0);
    const preview = await call('POST', `/pools/${pool.id}/preview`, { port: ledge.port, retries: 0 });
    expect(preview.status).toBe(400);
    expect(preview.body.errors[0].code).toBe(1002);
    const viaMonitor = await call('POST', `/monitors/${monitor.id}/preview`, { port: ledge.port, retries: 0 });
    expect(viaMonitor.status).toBe(400);
    expect(viaMonitor.body.errors[0]?.message).toContain('pool "watched": origins[0].address: 127.0.0.1:');
  });

  it('refuses the same on update: a pool PATCH and a webhook PUT keep the stored record', async () => {
    const server = await counting();
    const pool = (await call('POST', '/pools', poolBody('update-me', [origin('127.0.0.1', server.port)], monitorId)))
      .body.result;
    const patched = await call('PATCH', `/pools/${pool.id}`, { origins: [origin('localhost', ledge.port)] });
    expect(patched.status).toBe(400);
    expect(patched.body.errors[0]?.code).toBe(1002);
    expect((await call('GET', `/pools/${pool.id}`)).body.result.origins[0].port).toBe(server.port);

    const created = await webhook(ledge, `http://127.0.0.1:${server.port}/hook`);
    expect(created.status).toBe(200);
    const id = (created.body as unknown as { result: { id: string } }).result.id;
    const path = `${ledge.apiUrl}/accounts/${ledge.accountId}/alerting/v3/destinations/webhooks/${id}`;
    const put = await fetch(path, {
      method: 'PUT',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hook', url: 'http://[fe80::1]:8080/hook' }),
    });
    expect(put.status).toBe(400);
    expect(((await put.json()) as { errors: unknown[] }).errors).toEqual([
      { code: 17009, message: 'url: [fe80::1]:8080 is refused by the egress policy (fe80::/10: IPv6 link-local)' },
    ]);
    const stored = (await (await fetch(path, { headers: ledge.tokenHeaders })).json()) as { result: { url: string } };
    expect(stored.result.url).toBe(`http://127.0.0.1:${server.port}/hook`);
  });

  it('refuses link-local and metadata addresses by the policy (nothing to connect to, no timeout to wait for)', async () => {
    // The policy's own refusal in each answer shows no connection was tried (a timeout would say so instead).
    for (const address of ['169.254.169.254', 'fe80::1', '::ffff:169.254.169.254']) {
      const res = await call('POST', '/pools', poolBody('meta', [origin(address)], monitorId));
      expect(res.status, address).toBe(400);
      expect(res.body.errors[0]?.message).toMatch(/refused by the egress policy \((169\.254\.0\.0\/16|fe80::\/10)/);
    }
    const hook = await webhook(ledge, 'http://169.254.169.254/latest/meta-data/');
    expect(hook.status).toBe(400);
    expect(hook.body.errors).toEqual([
      {
        code: 17009,
        message: 'url: 169.254.169.254:80 is refused by the egress policy (169.254.0.0/16: link-local, cloud metadata)',
      },
    ]);
  });

  it("refuses a webhook to the API itself; a failing receiver's body is never echoed", async () => {
    const own = await webhook(ledge, `${ledge.apiUrl}/accounts/${ledge.accountId}/tokens`);
    expect(own.status).toBe(400);
    expect(own.body.errors[0]).toEqual({
      code: 17009,
      message: `url: 127.0.0.1:${ledge.port} is refused by the egress policy (Ledge's own API listener)`,
    });
    const failing = await counting((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/plain' }).end('SECRET-BODY-MARKER internal details');
    });
    const answer = await webhook(ledge, `http://127.0.0.1:${failing.port}/hook`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]?.message).toBe(
      `the webhook did not accept the test message: http://127.0.0.1:${failing.port}/hook answered HTTP 500`,
    );
    // Previews report the status and the reason, not what the origin answered.
    const pool = (await call('POST', '/pools', poolBody('bodies', [origin('127.0.0.1', failing.port)]))).body.result;
    const preview = await call('POST', `/pools/${pool.id}/preview`, { expected_body: 'alive', retries: 0 });
    const result = await call('GET', `/preview/${preview.body.result.preview_id}`);
    expect(JSON.stringify(result.body)).not.toContain('SECRET-BODY-MARKER');
    expect(Object.values(result.body.result[pool.id].origins[0])[0]).toMatchObject({
      failure_reason: 'Response code mismatch error',
      response_code: 500,
    });
  });

  it('a receiver that trickles its answer holds the create call no longer than the deadline', async () => {
    const trickling = await counting(trickle(100));
    const started = performance.now();
    const res = await webhook(ledge, `http://127.0.0.1:${trickling.port}/hook`);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(400);
    expect(res.body.errors[0]?.message).toBe(
      `the webhook did not accept the test message: http://127.0.0.1:${trickling.port}/hook failed: no complete answer within 1500 ms`,
    );
    // Cut off by the deadline (the message says so), not before it.
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
  });
});

describe('an operator deny list', () => {
  it('refuses loopback by literal, name and IPv4-mapped spelling; the origin and the receiver see nothing', async () => {
    const ledge = await ledgeWith({ env: { LEDGE_EGRESS_DENY: '127.0.0.0/8,::1/128' } });
    const call = lbClient(ledge);
    const server = await counting();
    const monitor = (await call('POST', '/monitors', { interval: 1, retries: 0 })).body.result;
    for (const address of ['127.0.0.1', 'localhost', '::ffff:127.0.0.1', '::1']) {
      const res = await call('POST', '/pools', poolBody('denied', [origin(address, server.port)], monitor.id));
      expect(res.status, address).toBe(400);
      expect(res.body.errors[0]?.message).toMatch(
        /egress policy refuses \(denied by|refused by the egress policy \(denied by/,
      );
    }
    const hook = await webhook(ledge, `http://localhost:${server.port}/hook`);
    expect(hook.status).toBe(400);
    expect(hook.body.errors[0]?.message).toBe(
      `url: localhost resolves to 127.0.0.1:${server.port}, which the egress policy refuses (denied by 127.0.0.0/8)`,
    );
    expect(server.connections).toBe(0);
  });

  it('holds at probe time for pools created before the operator set it', async () => {
    const dataDir = tempDir();
    const server = await counting();
    let ledge = await ledgeWith({ dataDir });
    let call = lbClient(ledge);
    const monitor = (await call('POST', '/monitors', { interval: 1, timeout: 1, retries: 0 })).body.result;
    const pool = (await call('POST', '/pools', poolBody('before', [origin('localhost', server.port)], monitor.id))).body
      .result;
    await ledge.close();
    ledges.splice(ledges.indexOf(ledge), 1);
    // A probe the old server connected just before it closed can reach the origin's accept afterwards.
    const connections = await settledCount(server);

    ledge = await ledgeWith({ dataDir, env: { LEDGE_EGRESS_DENY: '127.0.0.0/8,::1/128' } });
    call = lbClient(ledge);
    let health: Record<string, unknown> | undefined;
    await poll(
      async () => {
        const view = (await call('GET', `/pools/${pool.id}/health`)).body.result;
        health = Object.values(view.pop_health.local.origins[0] as Record<string, Record<string, unknown>>)[0];
        return health?.['failure_reason'] === 'Refused by egress policy';
      },
      { everyMs: 100 },
    );
    expect(health).toMatchObject({ healthy: false, failure_reason: 'Refused by egress policy' });
    expect(server.connections).toBe(connections);
  });

  it('holds when a webhook delivery connects: the delivery fails with the reason, the receiver sees nothing', async () => {
    const dataDir = tempDir();
    const receiver = await counting((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    let ledge = await ledgeWith({ dataDir });
    const alerting = `/accounts/${ledge.accountId}/alerting/v3`;
    const post = async (target: TestLedge, path: string, body: unknown) =>
      (await fetch(`${target.apiUrl}${path}`, {
        method: 'POST',
        headers: { ...target.tokenHeaders, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json())) as { result: { id: string } };
    const hook = await post(ledge, `${alerting}/destinations/webhooks`, {
      name: 'r',
      url: `http://localhost:${receiver.port}/hook`,
    });
    await post(ledge, `${alerting}/policies`, {
      name: 'disabled pools',
      enabled: true,
      alert_type: 'load_balancing_pool_enablement_alert',
      mechanisms: { webhooks: [{ id: hook.result.id }] },
    });
    const pool = (await lbClient(ledge)('POST', '/pools', poolBody('switched', [origin('192.0.2.1')]))).body.result;
    await ledge.close();
    ledges.splice(ledges.indexOf(ledge), 1);
    const connections = receiver.connections;

    ledge = await ledgeWith({ dataDir, env: { LEDGE_EGRESS_DENY: '127.0.0.0/8,::1/128' } });
    expect((await lbClient(ledge)('PATCH', `/pools/${pool.id}`, { enabled: false })).status).toBe(200);
    let rows: { status: string; error: string | null; mechanism: string }[] = [];
    await poll(async () => {
      const res = await fetch(`${ledge.apiUrl}${alerting}/history`, { headers: ledge.tokenHeaders });
      rows = ((await res.json()) as { result: typeof rows }).result;
      return rows.length > 0;
    });
    expect(rows[0]).toMatchObject({
      status: 'retrying',
      error: `localhost resolves to 127.0.0.1:${receiver.port}, which the egress policy refuses (denied by 127.0.0.0/8)`,
    });
    expect(receiver.connections).toBe(connections);
  });

  it('a bad CIDR stops `ledge server` at start with a clear error (exit 1)', async () => {
    const result = await runCli(['server', '--data-dir', tempDir(), '--port', '0', '--egress-deny', '10.0.0.1/8']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--egress-deny: "10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?');
    const fromEnv = await runCli(['server', '--data-dir', tempDir(), '--port', '0'], {
      env: { LEDGE_EGRESS_ALLOW: 'example.com' },
    });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain('LEDGE_EGRESS_ALLOW: "example.com" is not a CIDR range');
  });
});

/** The server's connection count once it has not moved for 500 ms. */
async function settledCount(server: CountingServer): Promise<number> {
  let last = server.connections;
  let since = Date.now();
  const settled = await poll(
    () => {
      if (server.connections !== last) [last, since] = [server.connections, Date.now()];
      return Date.now() - since >= 500 ? { count: last } : undefined;
    },
    { everyMs: 50 },
  );
  return settled!.count;
}
