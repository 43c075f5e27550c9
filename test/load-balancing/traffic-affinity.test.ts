import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from './helpers.ts';
import {
  createLoadBalancer,
  createMonitor,
  createPool,
  createZone,
  NamedOrigin,
  trafficPort,
  trafficRequest,
} from './traffic-helpers.ts';

process.env['LEDGE_LB_MIN_INTERVAL'] = '1';

describe('load balancer traffic: session affinity', () => {
  let ledge: TestLedge;
  let port: number;
  let zoneId: string;
  let monitor: string;
  const origins: NamedOrigin[] = [];
  let hostCount = 0;

  /** A load balancer over one monitored pool of four origins, random origin steering. */
  const balance = async (extra: Record<string, unknown>) => {
    const name = `lb${++hostCount}.sticky.test`;
    const pool = await createPool(ledge, `sticky${hostCount}`, origins, { monitor });
    await createLoadBalancer(ledge, zoneId, { name, default_pools: [pool], fallback_pool: pool, ...extra });
    return name;
  };

  beforeAll(async () => {
    ledge = await startLedge();
    port = trafficPort(ledge);
    zoneId = await createZone(ledge, 'sticky.test');
    monitor = await createMonitor(ledge);
    for (const name of ['s1', 's2', 's3', 's4']) origins.push(await NamedOrigin.start(name));
  });
  afterAll(async () => {
    await ledge.close();
    for (const origin of origins) await origin.stop();
  });

  it('cookie: __cflb with the ttl and attributes keeps a client on its origin until that origin is down', async () => {
    const name = await balance({
      session_affinity: 'cookie',
      session_affinity_ttl: 1800,
      session_affinity_attributes: { samesite: 'Strict', secure: 'Always' },
    });
    const first = await trafficRequest(port, name);
    const setCookie = first.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(/^__cflb=[\w-]+; Path=\/; Max-Age=1800; HttpOnly; SameSite=Strict; Secure$/);
    const cookie = setCookie.split(';')[0]!;
    const pinned = first.body;
    for (let i = 0; i < 15; i++) {
      const answer = await trafficRequest(port, name, '/', { headers: { cookie: `a=b; ${cookie}` } });
      expect(answer.body).toBe(pinned);
      expect(answer.headers['set-cookie']).toBeUndefined();
    }
    // Without the cookie, four origins share the traffic.
    const spread = new Set<string>();
    for (let i = 0; i < 30; i++) spread.add((await trafficRequest(port, name)).body);
    expect(spread.size).toBeGreaterThan(1);

    const origin = origins.find((candidate) => candidate.name === pinned)!;
    await origin.stop();
    try {
      // The pinned origin is gone: the retry (then, once the monitor marks it down, steering) moves the
      // session, and a new cookie pins the origin that answered.
      const moved = await waitFor(async () => {
        const answer = await trafficRequest(port, name, '/', { headers: { cookie } });
        return answer.status === 200 && answer.body !== pinned && !answer.headers['set-cookie'] ? undefined : answer;
      }, 10_000);
      expect(moved.status).toBe(200);
      expect(moved.body).not.toBe(pinned);
      expect(moved.headers['set-cookie']?.[0]).toMatch(/^__cflb=/);
    } finally {
      await origin.start();
    }
  });

  it('cookie attributes default to SameSite=Lax without Secure, and Max-Age 82800', async () => {
    const name = await balance({ session_affinity: 'cookie' });
    const answer = await trafficRequest(port, name);
    expect(answer.headers['set-cookie']?.[0]).toMatch(/; Max-Age=82800; HttpOnly; SameSite=Lax$/);
  });

  it('header: the values of session_affinity_attributes.headers pin a session', async () => {
    const name = await balance({
      session_affinity: 'header',
      session_affinity_attributes: { headers: ['x-session'] },
    });
    const pins = new Map<string, string>();
    for (let round = 0; round < 3; round++) {
      for (let user = 0; user < 8; user++) {
        const answer = await trafficRequest(port, name, '/', { headers: { 'x-session': `user-${user}` } });
        expect(answer.headers['set-cookie']).toBeUndefined();
        if (round === 0) pins.set(`user-${user}`, answer.body);
        else expect(answer.body).toBe(pins.get(`user-${user}`));
      }
    }
    expect(new Set(pins.values()).size).toBeGreaterThan(1);
  });

  it('ip_cookie: the first origin is chosen by the client address, then the cookie pins it', async () => {
    const name = await balance({ session_affinity: 'ip_cookie' });
    const byClient = new Map<string, string>();
    for (let client = 2; client < 10; client++) {
      const agent = new Agent({ localAddress: `127.0.1.${client}` } as ConstructorParameters<typeof Agent>[0]);
      const first = await trafficRequest(port, name, '/', { agent });
      const again = await trafficRequest(port, name, '/', { agent });
      expect(again.body).toBe(first.body);
      expect(first.headers['set-cookie']?.[0]).toMatch(/^__cflb=/);
      byClient.set(String(client), first.body);
      agent.destroy();
    }
    expect(new Set(byClient.values()).size).toBeGreaterThan(1);
  });
});
