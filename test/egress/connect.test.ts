import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy, parseCidrList } from '../../src/egress/index.ts';
import { probe } from '../../src/load-balancing/health/probe.ts';
import type { ProbeTarget } from '../../src/load-balancing/health/probe-types.ts';
import { WebhookSender } from '../../src/notifications/webhook-sender.ts';
import { startCountingServer, trickle, type CountingServer } from './servers.ts';
import { systemClock } from '../../src/shared/clock.ts';

/**
 * The policy holds when connecting, not only when a record is written: a name can resolve to a refused
 * address later, and a redirect can point anywhere. Real servers count that no connection reached them.
 */
let allowed: CountingServer;
let refusedTarget: CountingServer;
let ownListener: CountingServer;
const servers: CountingServer[] = [];

beforeAll(async () => {
  refusedTarget = await startCountingServer();
  ownListener = await startCountingServer();
  allowed = await startCountingServer((req, res) => {
    if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${ownListener.port}/` }).end();
    else if (req.url === '/redirect-ftp') res.writeHead(302, { location: 'ftp://example.com/x' }).end();
    else if (req.url === '/redirect-malformed') res.writeHead(302, { location: 'http://[::1/' }).end();
    else if (req.url === '/secret-body') res.writeHead(500).end('SECRET-BODY-MARKER');
    else res.end('ok');
  });
  servers.push(allowed, refusedTarget, ownListener);
});
afterAll(async () => {
  for (const server of servers) await server.close();
});

function target(overrides: Partial<ProbeTarget>): ProbeTarget {
  return {
    type: 'http',
    address: '127.0.0.1',
    port: allowed.port,
    method: 'GET',
    path: '/',
    headers: {},
    timeoutMs: 2_000,
    retries: 2,
    expectedCodes: '2xx',
    expectedBody: '',
    followRedirects: false,
    allowInsecure: false,
    poolId: 'p',
    ...overrides,
  };
}

/** Loopback allowed except Ledge's own listener (the default), plus a deny list when given. */
function policyWith(deny = ''): EgressPolicy {
  const policy = new EgressPolicy({ deny: parseCidrList(deny) }, systemClock);
  policy.addOwnListener(ownListener.port, 'API');
  return policy;
}

describe('probes at connect time', () => {
  it('refuse IP literals, names and redirects that reach a refused address, without connecting', async () => {
    const policy = policyWith();
    const refusal = { healthy: false, failureReason: 'Refused by egress policy', responseCode: null, rttMs: null };
    expect(await probe(target({}), policy)).toMatchObject({ healthy: true });
    expect(await probe(target({ port: ownListener.port }), policy)).toEqual(refusal);
    expect(await probe(target({ address: 'localhost', port: ownListener.port }), policy)).toEqual(refusal);
    expect(await probe(target({ type: 'tcp', port: ownListener.port }), policy)).toEqual(refusal);
    expect(await probe(target({ type: 'tcp', address: 'localhost', port: ownListener.port }), policy)).toMatchObject({
      healthy: false,
      failureReason: 'Refused by egress policy',
    });
    // The origin itself is allowed; the redirect it answers with points at a refused listener.
    expect(await probe(target({ path: '/redirect', followRedirects: true }), policy)).toEqual(refusal);
    expect(ownListener.connections).toBe(0);

    // The operator's deny list: the same origin that was healthy above is now refused by name and literal.
    const denying = policyWith('127.0.0.0/8');
    const before = refusedTarget.connections;
    for (const address of ['127.0.0.1', 'localhost', '::ffff:127.0.0.1'])
      expect(await probe(target({ address, port: refusedTarget.port }), denying), address).toEqual(refusal);
    expect(refusedTarget.connections).toBe(before);
  });

  it('a redirect to a non-HTTP or malformed location fails the check instead of throwing', async () => {
    for (const path of ['/redirect-ftp', '/redirect-malformed'])
      expect(await probe(target({ path, followRedirects: true, retries: 0 }), policyWith()), path).toMatchObject({
        healthy: false,
        failureReason: 'HTTP Invalid Response',
        responseCode: 302,
      });
  });

  it('link-local is refused before connecting (there is nothing to connect to: no wait for a timeout)', async () => {
    // Refused by the policy, not timed out: a connection tried and abandoned would fail with a timeout's reason.
    const result = await probe(target({ address: '169.254.169.254', port: 80, timeoutMs: 5_000 }), policyWith());
    expect(result.failureReason).toBe('Refused by egress policy');
  });
});

describe('webhook sends at connect time', () => {
  it('refuse a refused address by literal and by name; the receiver sees no connection', async () => {
    const sender = new WebhookSender({ egress: policyWith('127.0.0.0/8') });
    try {
      const port = refusedTarget.port;
      expect(await sender.send(`http://127.0.0.1:${port}/hook`, '{}', null)).toEqual({
        ok: false,
        status: null,
        error: `127.0.0.1:${port} is refused by the egress policy (denied by 127.0.0.0/8)`,
      });
      expect(await sender.send(`http://localhost:${port}/hook`, '{}', null)).toEqual({
        ok: false,
        status: null,
        error: `localhost resolves to 127.0.0.1:${port}, which the egress policy refuses (denied by 127.0.0.0/8)`,
      });
      expect(refusedTarget.connections).toBe(0);
    } finally {
      sender.close();
    }
    const own = new WebhookSender({ egress: policyWith() });
    try {
      const result = await own.send(`http://127.0.0.1:${ownListener.port}/hook`, '{}', null);
      expect(result.error).toBe(
        `127.0.0.1:${ownListener.port} is refused by the egress policy (Ledge's own API listener)`,
      );
      expect(ownListener.connections).toBe(0);
    } finally {
      own.close();
    }
  });

  it('a receiver that trickles its answer is cut off at the total deadline', async () => {
    const trickling = await startCountingServer(trickle(100));
    servers.push(trickling);
    const sender = new WebhookSender({ egress: policyWith(), timeoutMs: 5_000, deadlineMs: 1_000 });
    try {
      const started = performance.now();
      const result = await sender.send(`http://127.0.0.1:${trickling.port}/hook`, '{}', null);
      const elapsed = performance.now() - started;
      expect(result).toEqual({ ok: false, status: null, error: 'no complete answer within 1000 ms' });
      // The per-chunk timeout (5 s) never fires: each byte comes within it. The deadline does (its message).
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(trickling.requests).toBe(1);
    } finally {
      sender.close();
    }
  });

  it("a failure names the status, never the receiver's body", async () => {
    const sender = new WebhookSender({ egress: policyWith() });
    try {
      const result = await sender.send(`http://127.0.0.1:${allowed.port}/secret-body`, '{}', null);
      expect(result).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
    } finally {
      sender.close();
    }
  });
});
