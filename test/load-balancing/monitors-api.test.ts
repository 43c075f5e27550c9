import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { lbClient, poolBody, TestOrigin, type LbCall } from './helpers.ts';

// This file runs with the server's default settings: the minimum interval is 5 s.
delete process.env['LEDGE_LB_MIN_INTERVAL'];

let ledge: TestLedge;
let call: LbCall;
beforeAll(async () => {
  ledge = await startLedge();
  call = lbClient(ledge);
});
afterAll(() => ledge.close());

describe('monitors API', () => {
  it('creates an http monitor with every default of the reference', async () => {
    const { status, body } = await call('POST', '/monitors', {});
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      type: 'http',
      description: '',
      method: 'GET',
      path: '/',
      header: {},
      port: 0,
      timeout: 5,
      retries: 2,
      interval: 60,
      expected_codes: '200',
      expected_body: '',
      follow_redirects: false,
      allow_insecure: false,
      consecutive_up: 0,
      consecutive_down: 0,
      probe_zone: '',
    });
    expect(body.result.id).toMatch(/^[0-9a-f]{32}$/);
    expect(body.result.created_on).toBe(body.result.modified_on);
  });

  it('uses connection_established for tcp monitors', async () => {
    const { body } = await call('POST', '/monitors', { type: 'tcp', port: 5432 });
    expect(body.result).toMatchObject({
      type: 'tcp',
      method: 'connection_established',
      port: 5432,
      path: '',
      expected_codes: '',
    });
  });

  it('stores every field, lists, replaces with PUT, merges with PATCH, deletes', async () => {
    const full = {
      type: 'https',
      description: 'api health',
      method: 'HEAD',
      path: '/healthz',
      header: { Host: ['api.example.com'], 'X-Check': ['1'] },
      port: 8443,
      timeout: 3,
      retries: 1,
      interval: 30,
      expected_codes: '2xx',
      expected_body: 'alive',
      follow_redirects: true,
      allow_insecure: true,
      consecutive_up: 2,
      consecutive_down: 3,
      probe_zone: 'example.com',
    };
    const created = (await call('POST', '/monitors', full)).body.result;
    expect(created).toMatchObject(full);
    expect((await call('GET', `/monitors/${created.id}`)).body.result).toEqual(created);
    expect((await call('GET', '/monitors')).body.result.map((m: { id: string }) => m.id)).toContain(created.id);
    const put = (await call('PUT', `/monitors/${created.id}`, { type: 'http', path: '/up' })).body.result;
    expect(put).toMatchObject({ id: created.id, type: 'http', path: '/up', retries: 2, interval: 60, description: '' });
    const patched = (await call('PATCH', `/monitors/${created.id}`, { type: 'tcp', port: 22 })).body.result;
    expect(patched).toMatchObject({ type: 'tcp', method: 'connection_established', port: 22, interval: 60 });
    expect((await call('DELETE', `/monitors/${created.id}`)).body.result).toEqual({ id: created.id });
    expect((await call('GET', `/monitors/${created.id}`)).status).toBe(404);
  });

  it('lists the pools that use a monitor as references, and refuses to delete it: 412, code 1005', async () => {
    const monitor = (await call('POST', '/monitors', {})).body.result;
    const pool = (await call('POST', '/pools', poolBody('uses-monitor', { monitor: monitor.id }))).body.result;
    const refs = await call('GET', `/monitors/${monitor.id}/references`);
    expect(refs.body.result).toEqual([
      { reference_type: 'referrer', resource_id: pool.id, resource_name: 'uses-monitor', resource_type: 'pool' },
    ]);
    const del = await call('DELETE', `/monitors/${monitor.id}`);
    expect(del.status).toBe(412);
    expect(del.body.errors[0].code).toBe(1005);
    expect(del.body.errors[0].message).toContain('uses-monitor');
    await call('PATCH', `/pools/${pool.id}`, { monitor: null });
    expect((await call('DELETE', `/monitors/${monitor.id}`)).status).toBe(200);
  });
});

describe('monitor validation (400, code 1002)', () => {
  it.each([
    ['an unknown type', { type: 'ftp' }, /type/],
    ['a method that does not fit http', { method: 'FETCH' }, /method/],
    ['a method that does not fit tcp', { type: 'tcp', method: 'GET' }, /method/],
    ['a path without a leading slash', { path: 'health' }, /path/],
    ['an interval below the server minimum (5 s)', { interval: 4 }, /interval: must be at least 5 seconds/],
    ['a fractional interval', { interval: 10.5 }, /interval/],
    ['a timeout of 0', { timeout: 0 }, /timeout/],
    ['a timeout above 10', { timeout: 11 }, /timeout/],
    ['negative retries', { retries: -1 }, /retries/],
    ['retries above 5', { retries: 6 }, /retries/],
    ['a port out of range', { port: 70000 }, /port/],
    ['malformed expected_codes', { expected_codes: '2x' }, /expected_codes/],
    ['two Host values', { header: { Host: ['a.example', 'b.example'] } }, /Host/],
    ['a header that is not a list', { header: { 'X-A': 'b' } }, /header/],
    ['negative consecutive_up', { consecutive_up: -1 }, /consecutive_up/],
    ['negative consecutive_down', { consecutive_down: -2 }, /consecutive_down/],
    ['a non-boolean follow_redirects', { follow_redirects: 'yes' }, /follow_redirects/],
    ['an unknown field', { frequency: 5 }, /Unrecognized key/],
  ])('rejects %s', async (_label, body, fragment) => {
    const before = (await call('GET', '/monitors')).body.result.length;
    const res = await call('POST', '/monitors', body);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1002);
    expect(res.body.errors[0].message).toMatch(fragment);
    expect(res.body.errors[0].message).toMatch(/: validation failed$/);
    expect((await call('GET', '/monitors')).body.result.length).toBe(before);
  });

  it('validates PATCH on the merged monitor', async () => {
    const monitor = (await call('POST', '/monitors', {})).body.result;
    const res = await call('PATCH', `/monitors/${monitor.id}`, { timeout: 99 });
    expect(res.body.errors[0].code).toBe(1002);
    expect((await call('GET', `/monitors/${monitor.id}`)).body.result.timeout).toBe(5);
  });

  it('answers 404 for unknown monitor ids', async () => {
    const id = 'e'.repeat(32);
    for (const [method, path] of [
      ['GET', `/monitors/${id}`],
      ['PATCH', `/monitors/${id}`],
      ['DELETE', `/monitors/${id}`],
      ['GET', `/monitors/${id}/references`],
      ['POST', `/monitors/${id}/preview`],
    ]) {
      const res = await call(method!, path!, method === 'PATCH' ? {} : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });
});

describe('previews', () => {
  it('probes a pool with a monitor configuration and keeps the result under a preview id', async () => {
    const up = await TestOrigin.start();
    const down = await TestOrigin.start();
    down.mode = { kind: 'status', status: 500 };
    try {
      const pool = (
        await call('POST', '/pools', {
          name: 'preview-pool',
          origins: [
            { name: 'up', address: '127.0.0.1', port: up.port },
            { name: 'down', address: 'localhost', port: down.port },
          ],
        })
      ).body.result;
      const started = await call('POST', `/pools/${pool.id}/preview`, {
        type: 'http',
        expected_codes: '2xx',
        timeout: 2,
        retries: 0,
      });
      expect(started.status).toBe(200);
      expect(started.body.result.pools).toEqual({ [pool.id]: 'preview-pool' });
      const preview = await call('GET', `/preview/${started.body.result.preview_id}`);
      const result = preview.body.result[pool.id];
      expect(result.healthy).toBe(true);
      expect(result.origins[0]['127.0.0.1']).toMatchObject({
        healthy: true,
        failure_reason: 'No failures',
        response_code: 200,
      });
      expect(result.origins[1]['localhost']).toMatchObject({
        healthy: false,
        failure_reason: 'Response code mismatch error',
        response_code: 500,
      });

      const monitor = (await call('POST', '/monitors', {})).body.result;
      await call('PATCH', `/pools/${pool.id}`, { monitor: monitor.id });
      const viaMonitor = await call('POST', `/monitors/${monitor.id}/preview`, {
        expected_codes: '5xx',
        retries: 0,
        timeout: 2,
      });
      const monitorPreview = (await call('GET', `/preview/${viaMonitor.body.result.preview_id}`)).body.result[pool.id];
      expect(
        monitorPreview.origins.map((o: Record<string, { healthy: boolean }>) => Object.values(o)[0]?.healthy),
      ).toEqual([false, true]);
      await call('PATCH', `/pools/${pool.id}`, { monitor: null });
    } finally {
      await up.stop();
      await down.stop();
    }
  });

  it('rejects an invalid preview monitor, and unknown preview ids', async () => {
    const pool = (await call('POST', '/pools', poolBody('preview-bad'))).body.result;
    const res = await call('POST', `/pools/${pool.id}/preview`, { type: 'gopher' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe(1002);
    expect((await call('GET', `/preview/${'0'.repeat(32)}`)).status).toBe(404);
  });
});
