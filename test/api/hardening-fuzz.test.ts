import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../src/api/app.ts';
import { startLedge, TEST_CREDENTIALS, type TestLedge } from '../helpers/ledge.ts';
import { api, uploadScript } from '../workers/helpers.ts';
import { AUTH } from './hardening-helpers.ts';

/**
 * Issue 12, point 8: generated paths, headers and bodies against every route of the API. Whatever a
 * client sends, the answer is never a 5xx, and every 4xx is a v4 envelope. Fixed seed and a bounded
 * number of runs: the same inputs on every run, in well under a minute.
 */
// LEDGE_FUZZ_SEED / LEDGE_FUZZ_RUNS explore further by hand; CI runs the fixed ones.
const SEED = Number(process.env['LEDGE_FUZZ_SEED'] ?? 20261123);
const RUNS = Number(process.env['LEDGE_FUZZ_RUNS'] ?? 400);

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

describe('fuzzing every route', () => {
  let ledge: TestLedge;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let routes: { method: string; path: string }[];
  /** Names and ids that exist, so that generated paths also reach the handlers behind the lookups. */
  const known = ['fuzz', 'a', 'present'];

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    // The route table as the server registers it (derived, so new routes are fuzzed too).
    const seen = new Set<string>();
    routes = createApiApp(ledge.server.platform)
      .routes.filter((route) => route.method !== 'ALL' && !route.path.endsWith('*'))
      .filter((route) => !seen.has(`${route.method} ${route.path}`) && seen.add(`${route.method} ${route.path}`))
      .map(({ method, path }) => ({ method, path }));
    // Something to find: a bucket with an object, a script, a pool.
    const base = `${ledge.apiUrl}/accounts/${ledge.accountId}`;
    const json = { ...AUTH, 'content-type': 'application/json' };
    await fetch(`${base}/r2/buckets`, { method: 'POST', headers: json, body: '{"name":"fuzz"}' });
    await fetch(`${base}/r2/buckets/fuzz/objects/a`, { method: 'PUT', headers: AUTH, body: 'x' });
    expect((await uploadScript(ledge, 'present')).status).toBe(200);
    const monitor = await api(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/monitors`, {
      type: 'http',
      interval: 3600,
    });
    const pool = await api(ledge, 'POST', `/accounts/${ledge.accountId}/load_balancers/pools`, {
      name: 'fuzz-pool',
      origins: [{ name: 'o', address: '127.0.0.1', enabled: false }],
    });
    known.push(monitor.body.result.id as string, pool.body.result.id as string);
    // A zone with a load balancer on that pool, so /zones/{zone_id}/load_balancers/{id} reach their handlers.
    const zone = await api(ledge, 'POST', '/zones', { name: 'fuzz.example', account: { id: ledge.accountId } });
    const poolId = pool.body.result.id as string;
    const lb = await api(ledge, 'POST', `/zones/${zone.body.result.id as string}/load_balancers`, {
      name: 'www.fuzz.example',
      default_pools: [poolId],
      fallback_pool: poolId,
    });
    known.push(zone.body.result.id as string, lb.body.result.id as string);
  });
  afterAll(async () => {
    agent.destroy();
    await ledge?.close();
  });

  function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: ledge.port, method, path, headers, agent }, (res) => {
        // A successful log stream (GET .../tail) never ends by itself: its status and type are the answer.
        if (res.statusCode === 200 && /ndjson|event-stream/.test(String(res.headers['content-type']))) {
          res.destroy();
          resolve({ status: 200, contentType: String(res.headers['content-type']), text: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const pathText = fc.oneof(
    fc.constantFrom(
      '%ff',
      '%',
      '%E0%A4%A',
      '..',
      '.',
      '%2F',
      '%00',
      'constructor',
      '__proto__',
      '%F0%9F%A6%86',
      'a%20b',
      '',
    ),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
    fc.webSegment(),
    fc.string({ minLength: 300, maxLength: 3000, unit: 'grapheme-ascii' }).map(encodeURIComponent),
  );

  /** A concrete path for a route: mostly the real account and plausible names, sometimes junk. */
  const concretePath = (template: string) =>
    fc
      .record({
        account: fc.oneof({ weight: 5, arbitrary: fc.constant(ledge.accountId) }, { weight: 1, arbitrary: pathText }),
        name: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...known) },
          { weight: 1, arbitrary: fc.constantFrom('x-y', 'A', 'missing') },
          { weight: 2, arbitrary: pathText },
        ),
        extra: fc.oneof({ weight: 9, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: pathText }),
        query: fc.option(fc.webQueryParameters(), { freq: 2 }),
      })
      .map(({ account, name, extra, query }) => {
        let path = template.replace(':account_id', account).replace(/:[a-z_]+(\{[^}]*\})?/g, () => name || 'x');
        if (extra !== null) path += `/${extra}`;
        return query ? `${path}?${query}` : path;
      });

  // Health checks and webhook deliveries go out: only to loopback ports where nothing listens.
  const nowhere = fc.constantFrom('127.0.0.1:9', '127.0.0.1', '[::1]:9', 'localhost:9', '', 'not an address');

  const jsonBody = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
    fc
      .record(
        {
          name: fc.oneof(fc.string(), fc.constantFrom('fuzz', 'pool', 'a'.repeat(2000)), fc.integer()),
          text: fc.string(),
          enabled: fc.oneof(fc.boolean(), fc.string()),
          origins: fc.array(fc.record({ name: fc.string(), address: nowhere, enabled: fc.boolean() }), {
            maxLength: 3,
          }),
          versions: fc.array(fc.record({ version_id: fc.string(), percentage: fc.integer() }), { maxLength: 2 }),
          annotations: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
          type: fc.constantFrom('secret_text', 'http', 'https', 'tcp', 'generic', 'x'),
          alert_type: fc.constantFrom('load_balancing_health_alert', 'x'),
          mechanisms: fc.dictionary(fc.string(), fc.array(fc.record({ id: fc.string() }))),
          url: fc.oneof(
            nowhere.map((host) => `http://${host}/hook`),
            fc.string(),
          ),
          subdomain: fc.string(),
          account: fc.record({ id: fc.oneof(fc.constant(TEST_CREDENTIALS.accountId), fc.string()) }),
          default_pools: fc.array(fc.oneof(fc.constantFrom(...known), fc.string()), { maxLength: 3 }),
          fallback_pool: fc.oneof(fc.constantFrom(...known), fc.string(), fc.integer()),
          steering_policy: fc.constantFrom('off', 'random', 'geo', '', 'x'),
          session_affinity: fc.constantFrom('none', 'cookie', 'header', 'x'),
          session_affinity_attributes: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
          random_steering: fc.record({
            default_weight: fc.double(),
            pool_weights: fc.dictionary(fc.string(), fc.double()),
          }),
        },
        { requiredKeys: [] },
      )
      .map((value) => JSON.stringify(value)),
    fc.constant('['.repeat(5000) + ']'.repeat(5000)),
    fc.constantFrom('{', '{"a":}', 'null', '"x"', '1e999', '\u0000', '{"__proto__":{"x":1}}'),
  );

  const multipartBody = fc
    .record({
      metadata: fc.oneof(jsonBody, fc.constant('{"main_module":"w.js","compatibility_date":"2025-13-45"}')),
      moduleName: fc.oneof(fc.constant('w.js'), fc.string({ maxLength: 30 })),
      moduleType: fc.constantFrom('application/javascript+module', 'text/plain', 'x/y', ''),
      source: fc.string({ maxLength: 200 }),
    })
    .map(({ metadata, moduleName, moduleType, source }) => {
      const b = 'fuzzboundary';
      const text =
        `--${b}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${metadata}\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="${moduleName.replace(/["\r\n]/g, '')}"; filename="m"\r\n` +
        `Content-Type: ${moduleType}\r\n\r\n${source}\r\n--${b}--\r\n`;
      return { contentType: `multipart/form-data; boundary=${b}`, body: Buffer.from(text) };
    });

  const body = fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: jsonBody.map((text) => ({ contentType: 'application/json', body: Buffer.from(text) })) },
    { weight: 2, arbitrary: multipartBody },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 2000 }).map((bytes) => ({
        contentType: 'application/octet-stream',
        body: Buffer.from(bytes),
      })),
    },
  );

  const headerValue = fc.string({ maxLength: 40, unit: 'grapheme-ascii' }).map((s) => s.replace(/[\r\n]/g, ''));
  const headers = fc.record(
    {
      auth: fc.oneof(
        { weight: 8, arbitrary: fc.constant(AUTH.authorization) },
        { weight: 1, arbitrary: headerValue.map((v) => `Bearer ${v}`) },
        { weight: 1, arbitrary: fc.constant('') },
      ),
      'content-type': fc.oneof(
        fc.constantFrom('application/json', 'multipart/form-data', 'multipart/form-data; boundary=', 'text/plain'),
        headerValue,
      ),
      range: fc.oneof(fc.constantFrom('bytes=0-0', 'bytes=-5', 'bytes=5-1', 'bytes=x', 'bytes=0-1,3-4'), headerValue),
      'if-match': headerValue,
      'if-none-match': fc.constantFrom('*', '"x"', 'W/"y"', ''),
      'if-modified-since': fc.oneof(fc.constantFrom('Mon, 01 Jan 2024 00:00:00 GMT', 'yesterday'), headerValue),
      'content-md5': fc.oneof(fc.constantFrom('AAAAAAAAAAAAAAAAAAAAAA==', '!!'), headerValue),
      'cf-r2-storage-class': fc.constantFrom('Standard', 'InfrequentAccess', 'x', ''),
      'x-amz-meta-fuzz': headerValue,
      expires: headerValue,
      'x-auth-email': headerValue,
      'x-auth-key': headerValue,
    },
    { requiredKeys: ['auth'] },
  );

  const request = fc.oneof(
    {
      weight: 9,
      arbitrary: fc.integer({ min: 0, max: 10_000 }).chain((index) => {
        const route = routes[index % routes.length]!;
        return fc.record({
          method: fc.oneof(
            { weight: 8, arbitrary: fc.constant(route.method) },
            { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
          ),
          path: concretePath(route.path),
        });
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constantFrom('GET', 'POST', 'DELETE'),
        path: fc.oneof(
          fc.webPath().map((p) => `/client/v4${p.startsWith('/') ? p : `/${p}`}`),
          fc.array(pathText, { maxLength: 6 }).map((segments) => `/client/v4/${segments.join('/')}`),
          fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)),
        ),
      }),
    },
  );

  it('never answers 5xx, and every 4xx is a v4 envelope', async () => {
    let tried = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, headers, body, async (target, { auth, ...rest }, payload) => {
        tried++;
        const sent: Record<string, string> = { ...rest };
        if (auth) sent['authorization'] = auth;
        const method = target.method;
        const withBody = method === 'GET' || method === 'HEAD' ? undefined : payload;
        if (withBody) sent['content-type'] = withBody.contentType;
        const answer = await send(method, target.path, sent, withBody?.body);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const label = `${method} ${target.path.slice(0, 200)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
        // 501 is the documented answer to `wrangler dev --remote`'s preview upload (POST .../edge-preview):
        // a missing feature, not a fault.
        const notImplemented =
          answer.status === 501 && method === 'POST' && /\/edge-preview$/.test(target.path.split('?')[0]!);
        expect(answer.status < 500 || notImplemented, label).toBe(true);
        // Outside /client/v4 the dashboard answers (its page, assets, session layer): no 5xx there either, but
        // its 4xx are its own (a plain 404 for a missing asset), not the v4 envelope.
        const api = target.path.startsWith('/client/v4/') || target.path === '/client/v4';
        // The GraphQL endpoint answers as GraphQL does (Cloudflare's too): `{ data, errors: [{ message }] }`.
        const graphql = target.path.split('?')[0] === '/client/v4/graphql';
        if (graphql && answer.status >= 400 && method === 'POST') {
          const body = JSON.parse(answer.text) as { errors?: { message?: unknown }[] };
          expect(body.errors?.length, label).toBeGreaterThan(0);
          expect(typeof body.errors?.[0]?.message, label).toBe('string');
        } else if (answer.status >= 400 && method !== 'HEAD' && api) {
          expect(answer.contentType, label).toContain('application/json');
          const envelope = JSON.parse(answer.text) as Record<string, unknown>;
          expect(envelope, label).toMatchObject({ success: false, result: null, messages: [] });
          const errors = envelope['errors'] as { code: unknown; message: unknown }[];
          expect(errors.length, label).toBeGreaterThan(0);
          for (const error of errors) {
            expect(typeof error.code, label).toBe('number');
            expect(typeof error.message, label).toBe('string');
            expect((error.message as string).length, label).toBeLessThanOrEqual(450);
          }
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    if (process.env['LEDGE_FUZZ_SEED']) console.info(Object.fromEntries(statuses));
    expect(tried).toBeGreaterThanOrEqual(RUNS);
    // The inputs reach the handlers, not only the router and authentication: successes and several
    // kinds of refusal.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(RUNS / 20);
    expect([...statuses.keys()].filter((status) => status >= 400).length).toBeGreaterThanOrEqual(4);

    expect(routes.length).toBeGreaterThan(40);
  });
});
