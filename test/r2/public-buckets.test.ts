import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import {
  createLoadBalancer,
  createPool,
  createZone,
  NamedOrigin,
  trafficPort,
} from '../load-balancing/traffic-helpers.ts';
import { call } from '../notifications/api-helpers.ts';

/**
 * Issue 29, point 5: public buckets. The managed public URL (`pub-<bucket id>.r2.localhost`) and custom
 * domains serve a bucket read-only over plain HTTP on the traffic port, by Host, with ranges, conditionals,
 * caching headers and the bucket's CORS rules; real clients (node:http, curl) on loopback.
 */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let ledge: TestLedge;
let port: number;
let sdk: Cloudflare;
let bucketId: string;
let managedHost: string;
const big = randomBytes(200 * 1024);
const bucketPath = (bucket: string) => `/accounts/${ledge.accountId}/r2/buckets/${bucket}`;

function get(host: string, path: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: { host, ...init.headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function putObject(bucket: string, key: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await fetch(`${ledge.apiUrl}${bucketPath(bucket)}/objects/${encodeURIComponent(key)}`, {
    method: 'PUT',
    headers: { ...ledge.tokenHeaders, ...headers },
    body,
  });
  expect(response.status).toBe(200);
}

beforeAll(async () => {
  ledge = await startLedge();
  port = trafficPort(ledge);
  sdk = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
  for (const name of ['site', 'private', 'wrangled'])
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name });
  bucketId = (await ledge.server.platform.storage.getBucket(ledge.accountId, 'site'))!.id;
  managedHost = `pub-${bucketId}.r2.localhost`;
  await putObject('site', 'index.html', '<h1>hello</h1>', {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'public, max-age=60',
  });
  await putObject('site', 'big.bin', big, { 'content-type': 'application/octet-stream' });
  await putObject('site', 'dir/a b.txt', 'spaced', { 'content-type': 'text/plain', 'x-amz-meta-secret': 'hidden' });
  await putObject('private', 'index.html', 'private');
});
afterAll(async () => ledge?.close());

describe('the managed public URL', () => {
  it('is off until enabled, then serves the bucket by Host; off again stops it', async () => {
    const before = await call(ledge, 'GET', `${bucketPath('site')}/domains/managed`);
    // `url` is Ledge's: where the bucket answers, with scheme and the real traffic port.
    const managedUrl = `http://${managedHost}:${port}/`;
    expect(before.body.result).toEqual({ bucketId, domain: managedHost, enabled: false, url: managedUrl });
    expect((await get(managedHost, '/index.html')).body.toString()).not.toBe('<h1>hello</h1>');

    const on = await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: true });
    expect(on.body.result).toEqual({ bucketId, domain: managedHost, enabled: true, url: managedUrl });
    const page = await get(managedHost, '/index.html');
    expect(page.status).toBe(200);
    expect(page.body.toString()).toBe('<h1>hello</h1>');
    // Another bucket's name on the same host does not reach it: the host is the bucket.
    expect((await get(managedHost, '/private/index.html')).status).toBe(404);
    // The Host header's case and port do not matter.
    expect((await get(`PUB-${bucketId}.R2.LOCALHOST:${port}`, '/index.html')).status).toBe(200);

    await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: false });
    expect((await get(managedHost, '/index.html')).body.toString()).not.toBe('<h1>hello</h1>');
    await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: true });
  });

  it('refuses bad input and unknown buckets', async () => {
    const bad = await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]?.code).toBe(10040);
    const missing = await call(ledge, 'GET', `${bucketPath('no-such')}/domains/managed`);
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]?.code).toBe(10006);
  });
});

describe('serving objects', () => {
  beforeAll(async () => {
    await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: true });
  });

  it('answers GET and HEAD with the caching headers of the object, and no custom metadata', async () => {
    const got = await get(managedHost, '/big.bin');
    expect(got.status).toBe(200);
    expect(got.body.equals(big)).toBe(true);
    const head = await get(managedHost, '/index.html', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'public, max-age=60',
      'content-length': '14',
      'accept-ranges': 'bytes',
    });
    expect(head.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Date.parse(head.headers['last-modified']!)).toBeGreaterThan(Date.now() - 120_000);
    const spaced = await get(managedHost, '/dir/a%20b.txt');
    expect(spaced.body.toString()).toBe('spaced');
    expect(spaced.headers['x-amz-meta-secret']).toBeUndefined();
  });

  it('serves ranges: first bytes, a suffix, an open end; 416 past the end', async () => {
    const first = await get(managedHost, '/big.bin', { headers: { range: 'bytes=0-9' } });
    expect(first.status).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-9/${big.length}`);
    expect(first.body.equals(big.subarray(0, 10))).toBe(true);
    const suffix = await get(managedHost, '/big.bin', { headers: { range: 'bytes=-5' } });
    expect(suffix.body.equals(big.subarray(big.length - 5))).toBe(true);
    const open = await get(managedHost, '/big.bin', { headers: { range: 'bytes=100000-' } });
    expect(open.status).toBe(206);
    expect(open.body.equals(big.subarray(100000))).toBe(true);
    const past = await get(managedHost, '/big.bin', { headers: { range: `bytes=${big.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${big.length}`);
  });

  it('answers conditionals: 304 for a current copy, 412 for a failed precondition, If-Range', async () => {
    const { etag, 'last-modified': lastModified } = (await get(managedHost, '/index.html', { method: 'HEAD' })).headers;
    const notModified = await get(managedHost, '/index.html', { headers: { 'if-none-match': etag! } });
    expect(notModified.status).toBe(304);
    expect(notModified.body.length).toBe(0);
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.headers['cache-control']).toBe('public, max-age=60');
    expect((await get(managedHost, '/index.html', { headers: { 'if-modified-since': lastModified! } })).status).toBe(
      304,
    );
    expect(
      (await get(managedHost, '/index.html', { method: 'HEAD', headers: { 'if-none-match': etag! } })).status,
    ).toBe(304);
    expect((await get(managedHost, '/index.html', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    expect((await get(managedHost, '/index.html', { headers: { 'if-match': '"other"' } })).status).toBe(412);
    const past = new Date(Date.now() - 86_400_000).toUTCString();
    expect((await get(managedHost, '/index.html', { headers: { 'if-unmodified-since': past } })).status).toBe(412);
    expect((await get(managedHost, '/index.html', { headers: { 'if-match': etag! } })).status).toBe(200);

    const bigEtag = (await get(managedHost, '/big.bin', { method: 'HEAD' })).headers.etag!;
    const current = await get(managedHost, '/big.bin', { headers: { range: 'bytes=0-3', 'if-range': bigEtag } });
    expect(current.status).toBe(206);
    const stale = await get(managedHost, '/big.bin', { headers: { range: 'bytes=0-3', 'if-range': '"old"' } });
    expect(stale.status).toBe(200);
    expect(stale.body.length).toBe(big.length);
  });

  it('answers a missing object and the root with an HTML 404', async () => {
    for (const path of ['/nothing-here', '/', '/index.html/']) {
      const missing = await get(managedHost, path);
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(missing.body.toString()).toContain('404 Not Found');
    }
    expect((await get(managedHost, '/%E0%A4%A')).status).toBe(400);
  });

  it('refuses writes with 401 and leaves the object as it was', async () => {
    for (const method of ['PUT', 'POST', 'DELETE', 'PATCH']) {
      const refused = await get(managedHost, '/index.html', { method });
      expect(refused.status, method).toBe(401);
      expect(refused.headers.allow).toBe('GET, HEAD, OPTIONS');
    }
    const withBody = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/index.html', method: 'PUT', headers: { host: managedHost }, agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('overwritten');
    });
    expect(withBody).toBe(401);
    expect((await get(managedHost, '/index.html')).body.toString()).toBe('<h1>hello</h1>');
  });

  it('applies the bucket CORS rules, preflight included', async () => {
    const noRules = await get(managedHost, '/index.html', { headers: { origin: 'http://app.example' } });
    expect(noRules.headers['access-control-allow-origin']).toBeUndefined();
    await call(ledge, 'PUT', `${bucketPath('site')}/cors`, {
      rules: [
        {
          allowed: { origins: ['http://app.example'], methods: ['GET', 'HEAD'], headers: ['range'] },
          exposeHeaders: ['ETag', 'Content-Range'],
          maxAgeSeconds: 600,
        },
      ],
    });
    const allowed = await get(managedHost, '/big.bin', {
      headers: { origin: 'http://app.example', range: 'bytes=0-1' },
    });
    expect(allowed.status).toBe(206);
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': 'http://app.example',
      'access-control-expose-headers': 'ETag, Content-Range',
      vary: 'Origin',
    });
    const foreign = await get(managedHost, '/index.html', { headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.headers.vary).toBe('Origin');
    const missing = await get(managedHost, '/nope', { headers: { origin: 'http://app.example' } });
    expect(missing.status).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe('http://app.example');

    const preflight = await get(managedHost, '/big.bin', {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'Range',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': 'http://app.example',
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-allow-headers': 'range',
      'access-control-max-age': '600',
    });
    const refused = await get(managedHost, '/big.bin', {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'DELETE' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('works for curl, a real HTTP client (*.localhost resolves to loopback)', async () => {
    const { stdout } = await promisify(execFile)('curl', [
      '-sS',
      '-D',
      '-',
      '--resolve',
      `${managedHost}:${port}:127.0.0.1`,
      '-H',
      'Range: bytes=4-7',
      `http://${managedHost}:${port}/index.html`,
    ]);
    expect(stdout).toMatch(/^HTTP\/1\.1 206/);
    expect(stdout.toLowerCase()).toContain('content-range: bytes 4-7/14');
    expect(stdout.endsWith('hell')).toBe(true);
  });

  it('serves nothing once the bucket is deleted', async () => {
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'short-lived' });
    const id = (await ledge.server.platform.storage.getBucket(ledge.accountId, 'short-lived'))!.id;
    await putObject('short-lived', 'a.txt', 'a');
    await call(ledge, 'PUT', `${bucketPath('short-lived')}/domains/managed`, { enabled: true });
    expect((await get(`pub-${id}.r2.localhost`, '/a.txt')).status).toBe(200);
    await ledge.server.platform.storage.objects.delete(
      (await ledge.server.platform.storage.getBucket(ledge.accountId, 'short-lived'))!,
      ['a.txt'],
    );
    await ledge.server.platform.storage.buckets.delete(ledge.accountId, 'short-lived');
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'short-lived' });
    await putObject('short-lived', 'a.txt', 'again');
    expect((await get(`pub-${id}.r2.localhost`, '/a.txt')).body.toString()).not.toBe('again');
  });
});

describe('custom domains', () => {
  let zoneId: string;
  beforeAll(async () => {
    zoneId = await createZone(ledge, 'example.test');
  });

  it('connects a domain in a zone of the account, lists, gets, updates and removes it', async () => {
    const created = await call(ledge, 'POST', `${bucketPath('site')}/domains/custom`, {
      domain: 'CDN.example.test',
      zoneId,
      enabled: true,
      minTLS: '1.2',
    });
    expect(created.status).toBe(200);
    const url = `http://cdn.example.test:${port}/`;
    expect(created.body.result).toEqual({ domain: 'cdn.example.test', enabled: true, zoneId, minTLS: '1.2', url });
    const served = await get('cdn.example.test', '/index.html');
    expect(served.status).toBe(200);
    expect(served.body.toString()).toBe('<h1>hello</h1>');

    const listed = await call(ledge, 'GET', `${bucketPath('site')}/domains/custom`);
    expect(listed.body.result).toEqual({
      domains: [
        {
          domain: 'cdn.example.test',
          enabled: true,
          status: { ownership: 'active', ssl: 'unknown' },
          minTLS: '1.2',
          zoneId,
          zoneName: 'example.test',
          url,
        },
      ],
    });
    const one = await call(ledge, 'GET', `${bucketPath('site')}/domains/custom/cdn.example.test`);
    expect(one.body.result).toMatchObject({ domain: 'cdn.example.test', zoneName: 'example.test' });
    expect((await call(ledge, 'GET', `${bucketPath('private')}/domains/custom/cdn.example.test`)).status).toBe(404);

    const off = await call(ledge, 'PUT', `${bucketPath('site')}/domains/custom/cdn.example.test`, { enabled: false });
    expect(off.body.result).toEqual({ domain: 'cdn.example.test', enabled: false, minTLS: '1.2', url });
    expect((await get('cdn.example.test', '/index.html')).body.toString()).not.toBe('<h1>hello</h1>');
    await call(ledge, 'PUT', `${bucketPath('site')}/domains/custom/cdn.example.test`, { enabled: true });
    expect((await get('cdn.example.test', '/index.html')).status).toBe(200);

    const removed = await call(ledge, 'DELETE', `${bucketPath('site')}/domains/custom/cdn.example.test`);
    expect(removed.body.result).toEqual({ domain: 'cdn.example.test' });
    expect((await get('cdn.example.test', '/index.html')).body.toString()).not.toBe('<h1>hello</h1>');
    expect((await call(ledge, 'DELETE', `${bucketPath('site')}/domains/custom/cdn.example.test`)).status).toBe(404);
  });

  it('refuses a domain outside the zone, a foreign zone, a taken name and a managed-URL name', async () => {
    const add = (body: Record<string, unknown>, bucket = 'site') =>
      call(ledge, 'POST', `${bucketPath(bucket)}/domains/custom`, { enabled: true, zoneId, ...body });
    const outside = await add({ domain: 'cdn.elsewhere.test' });
    expect(outside.status).toBe(400);
    expect(outside.body.errors[0]?.message).toMatch(/is not in the zone example\.test/);
    expect((await add({ domain: 'not a host' })).status).toBe(400);
    expect((await add({ domain: `x.r2.localhost` })).status).toBe(400);
    expect((await add({ domain: 'a.example.test', zoneId: 'f'.repeat(32) })).status).toBe(404);

    // A zone of another account (its owner is not a member here).
    const platform = ledge.server.platform;
    const other = await platform.accounts.createAccount({ name: 'Other' });
    const { user } = await platform.accounts.createUser({ email: 'zone-owner@example.com' });
    await platform.accounts.addMember(other.id, user.id);
    const theirs = await platform.accounts.createToken({ userId: user.id, name: 't' });
    const foreignZone = await fetch(`${ledge.apiUrl}/zones`, {
      method: 'POST',
      headers: { authorization: `Bearer ${theirs.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'theirs.test', account: { id: other.id } }),
    }).then(async (r) => ((await r.json()) as { result: { id: string } }).result.id);
    expect((await add({ domain: 'a.theirs.test', zoneId: foreignZone })).status).toBe(404);

    expect((await add({ domain: 'taken.example.test' })).status).toBe(200);
    const taken = await add({ domain: 'taken.example.test' }, 'private');
    expect(taken.status).toBe(409);
    expect(taken.body.errors[0]?.message).toMatch(/already connected/);
  });

  it('keeps load balancer hostnames and custom domains apart', async () => {
    const origin = await NamedOrigin.start('origin-a');
    try {
      const pool = await createPool(ledge, 'pool-a', [origin]);
      await createLoadBalancer(ledge, zoneId, { name: 'lb.example.test', default_pools: [pool], fallback_pool: pool });
      const answer = await call(ledge, 'POST', `${bucketPath('site')}/domains/custom`, {
        domain: 'lb.example.test',
        zoneId,
        enabled: true,
      });
      expect(answer.status).toBe(409);
      expect(answer.body.errors[0]?.message).toMatch(/load balancer/);
      // The load balancer still answers on its host, next to the public bucket on another.
      expect((await get('lb.example.test', '/')).headers['x-origin']).toBe('origin-a');
      // One keep-alive connection may ask for both: the raw data plane hands it over at the public host,
      // and node:http then serves the bucket and proxies the load balancer's requests alike.
      await call(ledge, 'PUT', `${bucketPath('site')}/domains/managed`, { enabled: true });
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const sockets = new Set<unknown>();
      const onSocket = (host: string, path: string) =>
        new Promise<Answer>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          });
          req.on('socket', (socket) => sockets.add(socket));
          req.on('error', reject);
          req.end();
        });
      expect((await onSocket('lb.example.test', '/')).headers['x-origin']).toBe('origin-a');
      expect((await onSocket(managedHost, '/index.html')).body.toString()).toBe('<h1>hello</h1>');
      expect((await onSocket('lb.example.test', '/')).headers['x-origin']).toBe('origin-a');
      expect((await onSocket(managedHost, '/index.html')).status).toBe(200);
      expect(sockets.size).toBe(1);
      agent.destroy();
      // HTTP/1.0 (served by node:http from the start) reaches the bucket too.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(`GET /index.html HTTP/1.0\r\nHost: ${managedHost}\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 200/);
      expect(raw.endsWith('<h1>hello</h1>')).toBe(true);

      // And the other way round: a load balancer may not take a custom domain's name.
      await call(ledge, 'POST', `${bucketPath('site')}/domains/custom`, {
        domain: 'files.example.test',
        zoneId,
        enabled: true,
      });
      const lb = await call(ledge, 'POST', `/zones/${zoneId}/load_balancers`, {
        name: 'files.example.test',
        default_pools: [pool],
        fallback_pool: pool,
      });
      expect(lb.status).toBe(400);
      expect(lb.body.errors[0]?.message).toMatch(/serves a public R2 bucket/);
      expect((await get('files.example.test', '/index.html')).body.toString()).toBe('<h1>hello</h1>');
    } finally {
      await origin.stop();
    }
  });

  it('stops serving the domains of a deleted zone', async () => {
    const zone = await createZone(ledge, 'gone.test');
    await call(ledge, 'POST', `${bucketPath('site')}/domains/custom`, {
      domain: 'www.gone.test',
      zoneId: zone,
      enabled: true,
    });
    expect((await get('www.gone.test', '/index.html')).status).toBe(200);
    expect((await call(ledge, 'DELETE', `/zones/${zone}`)).status).toBe(200);
    expect((await get('www.gone.test', '/index.html')).body.toString()).not.toBe('<h1>hello</h1>');
    expect((await call(ledge, 'GET', `${bucketPath('site')}/domains/custom/www.gone.test`)).status).toBe(404);
  });
});

describe('clients', () => {
  it('the official SDK drives the managed URL and custom domains', async () => {
    const account_id = ledge.accountId;
    const managed = await sdk.r2.buckets.domains.managed.update('private', { account_id, enabled: true });
    expect(managed.enabled).toBe(true);
    expect((await sdk.r2.buckets.domains.managed.list('private', { account_id })).domain).toBe(managed.domain);
    expect((await get(managed.domain, '/index.html')).body.toString()).toBe('private');

    const zone_id = await createZone(ledge, 'sdk.test');
    const created = await sdk.r2.buckets.domains.custom.create('private', {
      account_id,
      domain: 'files.sdk.test',
      zoneId: zone_id,
      enabled: true,
    });
    expect(created).toEqual({
      domain: 'files.sdk.test',
      enabled: true,
      zoneId: zone_id,
      url: `http://files.sdk.test:${port}/`,
    });
    expect((await sdk.r2.buckets.domains.custom.list('private', { account_id })).domains.map((d) => d.domain)).toEqual([
      'files.sdk.test',
    ]);
    const got = await sdk.r2.buckets.domains.custom.get('files.sdk.test', { account_id, bucket_name: 'private' });
    expect(got.status.ownership).toBe('active');
    const updated = await sdk.r2.buckets.domains.custom.update('files.sdk.test', {
      account_id,
      bucket_name: 'private',
      minTLS: '1.3',
    });
    expect(updated.minTLS).toBe('1.3');
    await sdk.r2.buckets.domains.custom.delete('files.sdk.test', { account_id, bucket_name: 'private' });
    expect((await sdk.r2.buckets.domains.custom.list('private', { account_id })).domains).toEqual([]);
  });

  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
  const wrangledHost = async () =>
    `pub-${(await ledge.server.platform.storage.getBucket(ledge.accountId, 'wrangled'))!.id}.r2.localhost`;

  // Each wrangler run starts a Node process (seconds on a busy machine): generous timeouts.
  it('wrangler r2 bucket dev-url enable, get and disable', async () => {
    await putObject('wrangled', 'hello.txt', 'from wrangler');
    const host = await wrangledHost();
    const enable = await wrangler(['r2', 'bucket', 'dev-url', 'enable', 'wrangled', '--force']);
    expect(enable.code, enable.stderr).toBe(0);
    expect(enable.stdout).toContain(host);
    const shown = await wrangler(['r2', 'bucket', 'dev-url', 'get', 'wrangled']);
    expect(shown.stdout).toContain(host);
    expect((await get(host, '/hello.txt')).body.toString()).toBe('from wrangler');
    const disable = await wrangler(['r2', 'bucket', 'dev-url', 'disable', 'wrangled', '--force']);
    expect(disable.code, disable.stderr).toBe(0);
    expect((await get(host, '/hello.txt')).body.toString()).not.toBe('from wrangler');
  }, 180_000);

  it('wrangler r2 bucket domain add, list and remove', async () => {
    await putObject('wrangled', 'hello.txt', 'from wrangler');
    const zone = await createZone(ledge, 'wrangler.test');
    const add = await wrangler([
      'r2',
      'bucket',
      'domain',
      'add',
      'wrangled',
      '--domain',
      'static.wrangler.test',
      '--zone-id',
      zone,
      '--force',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const list = await wrangler(['r2', 'bucket', 'domain', 'list', 'wrangled']);
    expect(list.stdout).toContain('static.wrangler.test');
    expect(list.stdout).toContain(zone);
    expect((await get('static.wrangler.test', '/hello.txt')).body.toString()).toBe('from wrangler');
    const remove = await wrangler([
      'r2',
      'bucket',
      'domain',
      'remove',
      'wrangled',
      '--domain',
      'static.wrangler.test',
      '--force',
    ]);
    expect(remove.code, remove.stderr).toBe(0);
    expect((await get('static.wrangler.test', '/hello.txt')).body.toString()).not.toBe('from wrangler');
  }, 180_000);
});

describe('LEDGE_R2_PUBLIC_DOMAIN', () => {
  it('names the managed URLs, and a value that is no hostname stops the start', async () => {
    const other = await startLedge({ env: { LEDGE_R2_PUBLIC_DOMAIN: 'Files.Example.' } });
    try {
      await other.server.platform.storage.buckets.create(other.accountId, { name: 'named' });
      const path = `/accounts/${other.accountId}/r2/buckets/named/domains/managed`;
      const managed = await call(other, 'PUT', path, { enabled: true });
      expect((managed.body.result as { domain: string }).domain).toMatch(/^pub-[0-9a-f]{32}\.files\.example$/);
    } finally {
      await other.close();
    }
    await expect(startLedge({ env: { LEDGE_R2_PUBLIC_DOMAIN: 'not a domain' } })).rejects.toThrow(
      /LEDGE_R2_PUBLIC_DOMAIN must be a hostname/,
    );
  });
});
