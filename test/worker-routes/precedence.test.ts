import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { api, callFunction, uploadScript } from '../workers/helpers.ts';

/**
 * One hostname, several things that could serve it: Workers routes run first (as on Cloudflare, a Worker on a
 * route runs in front of the origin), then Custom Domains, public buckets, load balancers. A Custom Domain owns
 * its hostname: it cannot share it with a load balancer or a public bucket.
 */
describe('worker routes: the order on a shared hostname', () => {
  let ledge: TestLedge;
  let origin: NamedOrigin;
  let zoneId: string;
  const traffic = (host: string, path: string) => callFunction(ledge.server.platform.traffic.port!, host, path);
  const bucket = (suffix = '') => `/accounts/${ledge.accountId}/r2/buckets/pub${suffix}`;

  beforeAll(async () => {
    ledge = await startLedge();
    origin = await NamedOrigin.start('lb-origin');
    zoneId = await createZone(ledge, 'mixed.test');
    const pool = await createPool(ledge, 'mixed-pool', [origin]);
    await createLoadBalancer(ledge, zoneId, { name: 'lb.mixed.test', default_pools: [pool], fallback_pool: pool });
    expect((await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'pub' })).status).toBe(200);
    const put = await fetch(`${ledge.apiUrl}${bucket('/objects/a.txt')}`, {
      method: 'PUT',
      headers: ledge.tokenHeaders,
      body: 'from the bucket',
    });
    expect(put.status).toBe(200);
    const domain = await api(ledge, 'POST', bucket('/domains/custom'), {
      domain: 'cdn.mixed.test',
      zoneId,
      enabled: true,
    });
    expect(domain.status, JSON.stringify(domain.body.errors)).toBe(200);
    const up = await uploadScript(ledge, 'front', {
      modules: {
        'index.js': 'export default { fetch(r) { return new Response("worker " + new URL(r.url).pathname); } };',
      },
    });
    expect(up.status).toBe(200);
  });
  afterAll(async () => {
    await ledge?.close();
    await origin?.stop();
  });

  it('a route puts the Worker in front of a load balancer and a public bucket for its paths only', async () => {
    expect((await traffic('lb.mixed.test', '/other')).headers['x-origin']).toBe('lb-origin');
    expect((await traffic('cdn.mixed.test', '/a.txt')).text).toBe('from the bucket');
    for (const host of ['lb.mixed.test', 'cdn.mixed.test']) {
      const route = await api(ledge, 'POST', `/zones/${zoneId}/workers/routes`, {
        pattern: `${host}/worker/*`,
        script: 'front',
      });
      expect(route.status, JSON.stringify(route.body.errors)).toBe(200);
    }
    expect((await traffic('lb.mixed.test', '/worker/x')).text).toBe('worker /worker/x');
    expect((await traffic('cdn.mixed.test', '/worker/y')).text).toBe('worker /worker/y');
    // Other paths still reach what the hostname served before.
    const lb = await traffic('lb.mixed.test', '/other');
    expect(lb.headers['x-origin']).toBe('lb-origin');
    expect((await traffic('cdn.mixed.test', '/a.txt')).text).toBe('from the bucket');
    // A route without a Worker on a narrower path hands it back to the load balancer.
    const bypass = await api(ledge, 'POST', `/zones/${zoneId}/workers/routes`, {
      pattern: 'lb.mixed.test/worker/skip',
    });
    expect(bypass.status).toBe(200);
    expect((await traffic('lb.mixed.test', '/worker/skip')).headers['x-origin']).toBe('lb-origin');
  });

  it("refuses a Custom Domain on a load balancer's or a public bucket's hostname, and them on a Custom Domain's", async () => {
    const domains = `/accounts/${ledge.accountId}/workers/domains`;
    for (const hostname of ['lb.mixed.test', 'cdn.mixed.test']) {
      const refused = await api(ledge, 'PUT', domains, { hostname, service: 'front' });
      expect(refused.status).toBe(409);
      expect(refused.body.errors[0]!.message).toMatch(/already used by a (load balancer|public bucket)/);
    }
    expect((await api(ledge, 'PUT', domains, { hostname: 'app.mixed.test', service: 'front' })).status).toBe(200);
    const pool = await createPool(ledge, 'other-pool', [origin]);
    const lb = await api(ledge, 'POST', `/zones/${zoneId}/load_balancers`, {
      name: 'app.mixed.test',
      default_pools: [pool],
      fallback_pool: pool,
    });
    expect(lb.status).toBe(400);
    const bucketDomain = await api(ledge, 'POST', bucket('/domains/custom'), {
      domain: 'app.mixed.test',
      zoneId,
      enabled: true,
    });
    expect(bucketDomain.status).toBeGreaterThanOrEqual(400);
    expect((await traffic('app.mixed.test', '/')).text).toBe('worker /');
  });
});
