import parsePrometheusTextFormat, { type PromFamily, type PromSample } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { TestOrigin, waitFor } from '../load-balancing/helpers.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';

// Monitors may probe every second here (the server default minimum is 5 s).
process.env['LEDGE_LB_MIN_INTERVAL'] = '1';
const TOKEN = 'metrics-test-token-0123456789';

let ledge: TestLedge;
let origin: TestOrigin;
beforeAll(async () => {
  ledge = await startLedge({ env: { LEDGE_METRICS_TOKEN: TOKEN } });
  origin = await TestOrigin.start();
});
afterAll(async () => {
  await ledge?.close();
  await origin?.stop();
});

const metricsUrl = () => ledge.apiUrl.replace(/\/client\/v4$/, '/metrics');

/**
 * Scrapes /metrics and parses it with a real Prometheus text parser (prom2json's shape). That parser
 * folds every series of a histogram into one, dropping their labels; so the text is parsed a second
 * time without the histograms' TYPE lines, which gives each `<name>_count`/`_sum`/`_bucket` series as
 * an untyped family with its labels, and these are appended.
 */
async function scrape(): Promise<PromFamily[]> {
  const response = await fetch(metricsUrl(), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('version=0.0.4');
  const text = await response.text();
  const typed = parsePrometheusTextFormat(text);
  const untyped = parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram\n/gm, ''));
  return [...typed, ...untyped.filter((f) => /_(count|sum|bucket)$/.test(f.name))];
}

/** The `_count` of the histogram series whose labels include `labels`. */
function histogramCount(families: PromFamily[], name: string, labels: Record<string, string>): number {
  return value(families, `${name}_count`, labels);
}

function family(all: PromFamily[], name: string): PromFamily | undefined {
  return all.find((f) => f.name === name);
}

function samples(all: PromFamily[], name: string): PromSample[] {
  return family(all, name)?.metrics ?? [];
}

/** The value of the series whose labels include `labels` (0 when absent). */
function value(families: PromFamily[], name: string, labels: Record<string, string> = {}): number {
  const match = samples(families, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  return Number(match?.value ?? match?.count ?? 0);
}

describe('GET /metrics', () => {
  it('refuses scrapes without the token, and is not under /client/v4', async () => {
    expect((await fetch(metricsUrl())).status).toBe(401);
    const wrong = await fetch(metricsUrl(), { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('Bearer');
    // The API token is not the metrics token.
    expect((await fetch(metricsUrl(), { headers: ledge.tokenHeaders })).status).toBe(401);
  });

  it('refuses with 403 when no token is configured', async () => {
    const other = await startLedge();
    try {
      const response = await fetch(other.apiUrl.replace(/\/client\/v4$/, '/metrics'));
      expect(response.status).toBe(403);
      const body = (await response.json()) as { success: boolean; errors: { code: number; message: string }[] };
      expect(body.success).toBe(false);
      expect(body.errors[0]!.message).toContain('LEDGE_METRICS_TOKEN');
    } finally {
      await other.close();
    }
  });

  it('counts API requests by route group, method and status class, never by raw path', async () => {
    const before = await scrape();
    const r2Gets = value(before, 'ledge_api_requests_total', { group: 'r2', method: 'GET', status_class: '4xx' });
    for (let i = 0; i < 3; i++) await api(ledge, 'GET', `/accounts/${ledge.accountId}/r2/buckets/missing-${i}`);
    await api(ledge, 'GET', `/accounts/${ledge.accountId}/load_balancers/pools`);
    const after = await scrape();
    expect(value(after, 'ledge_api_requests_total', { group: 'r2', method: 'GET', status_class: '4xx' })).toBe(
      r2Gets + 3,
    );
    expect(
      value(after, 'ledge_api_requests_total', { group: 'load_balancing', method: 'GET', status_class: '2xx' }),
    ).toBeGreaterThanOrEqual(1);
    const latency = histogramCount(after, 'ledge_api_request_duration_seconds', { group: 'r2', method: 'GET' });
    expect(latency).toBeGreaterThanOrEqual(3);
    expect(value(after, 'ledge_api_request_duration_seconds_bucket', { group: 'r2', method: 'GET', le: '+Inf' })).toBe(
      latency,
    );
    expect(family(after, 'ledge_api_request_duration_seconds')?.type).toBe('HISTOGRAM');
    const text = await (await fetch(metricsUrl(), { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(text).not.toContain('missing-0');
  });

  it('counts function requests, outcomes, latency and R2 binding operations per script', async () => {
    expect((await api(ledge, 'POST', `/accounts/${ledge.accountId}/r2/buckets`, { name: 'metrics-b' })).status).toBe(
      200,
    );
    const source = `export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/throw') throw new Error('boom');
    if (pathname === '/put') { await env.B.put('k', 'x'.repeat(1000)); return new Response('stored', { status: 201 }); }
    if (pathname === '/get') { const o = await env.B.get('k'); return new Response(await o.text()); }
    return new Response('hi');
  },
};`;
    const uploaded = await uploadScript(ledge, 'counted', {
      modules: { 'index.js': source },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'B', bucket_name: 'metrics-b' }] },
    });
    expect(uploaded.status).toBe(200);
    expect((await enableWorkersDev(ledge, 'counted')).status).toBe(200);
    const host = `counted.${await accountSubdomain(ledge)}.localhost`;
    const port = functionsPort(ledge);
    await waitFor(async () => ((await callFunction(port, host, '/')).status === 200 ? true : undefined));

    const before = await scrape();
    const labels = { account: ledge.accountId, script: 'counted' };
    const ok0 = value(before, 'ledge_function_requests_total', { ...labels, outcome: 'ok' });
    for (let i = 0; i < 3; i++) expect((await callFunction(port, host, '/')).status).toBe(200);
    expect((await callFunction(port, host, '/put')).status).toBe(201);
    expect((await callFunction(port, host, '/get')).text).toBe('x'.repeat(1000));
    expect((await callFunction(port, host, '/throw')).status).toBe(500);

    const after = await scrape();
    expect(value(after, 'ledge_function_requests_total', { ...labels, outcome: 'ok' })).toBe(ok0 + 5);
    expect(value(after, 'ledge_function_requests_total', { ...labels, outcome: 'exception' })).toBe(1);
    expect(value(after, 'ledge_function_responses_total', { ...labels, status_class: '2xx' })).toBeGreaterThanOrEqual(
      5,
    );
    expect(histogramCount(after, 'ledge_function_request_duration_seconds', labels)).toBe(ok0 + 6);
    expect(value(after, 'ledge_r2_operations_total', { op: 'put', source: 'binding' })).toBe(1);
    expect(value(after, 'ledge_r2_operations_total', { op: 'get', source: 'binding' })).toBe(1);
    expect(value(after, 'ledge_r2_received_bytes_total', { source: 'binding' })).toBe(1000);
    expect(value(after, 'ledge_r2_sent_bytes_total', { source: 'binding' })).toBe(1000);

    // A redeploy starts new workerd processes from zero: the exposed counters still only grow.
    expect(
      (
        await uploadScript(ledge, 'counted', {
          modules: { 'index.js': source },
          metadata: { bindings: [{ type: 'r2_bucket', name: 'B', bucket_name: 'metrics-b' }] },
        })
      ).status,
    ).toBe(200);
    await waitFor(async () => ((await callFunction(port, host, '/')).status === 200 ? true : undefined));
    const redeployed = await scrape();
    expect(value(redeployed, 'ledge_function_requests_total', { ...labels, outcome: 'ok' })).toBeGreaterThanOrEqual(
      ok0 + 6,
    );
  });

  it('counts R2 API operations with their bytes', async () => {
    const before = await scrape();
    const base = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/metrics-b/objects/api-key`;
    const put = await fetch(base, { method: 'PUT', headers: ledge.tokenHeaders, body: 'y'.repeat(2048) });
    expect(put.status).toBe(200);
    const get = await fetch(base, { headers: ledge.tokenHeaders });
    expect((await get.arrayBuffer()).byteLength).toBe(2048);
    const after = await scrape();
    expect(value(after, 'ledge_r2_operations_total', { op: 'put', source: 'api' })).toBe(
      value(before, 'ledge_r2_operations_total', { op: 'put', source: 'api' }) + 1,
    );
    expect(value(after, 'ledge_r2_received_bytes_total', { source: 'api' })).toBe(
      value(before, 'ledge_r2_received_bytes_total', { source: 'api' }) + 2048,
    );
    expect(value(after, 'ledge_r2_sent_bytes_total', { source: 'api' })).toBe(
      value(before, 'ledge_r2_sent_bytes_total', { source: 'api' }) + 2048,
    );
  });

  it('counts health probes per pool and origin, with their latency', async () => {
    const lb = `/accounts/${ledge.accountId}/load_balancers`;
    const monitor = await api(ledge, 'POST', `${lb}/monitors`, { interval: 1, timeout: 1, retries: 0 });
    expect(monitor.status).toBe(200);
    const pool = await api(ledge, 'POST', `${lb}/pools`, {
      name: 'probed',
      monitor: monitor.body.result.id,
      origins: [{ name: 'web-1', address: '127.0.0.1', port: origin.port }],
    });
    expect(pool.status).toBe(200);
    const probes = await waitFor(async () => {
      const n = value(await scrape(), 'ledge_health_probes_total', {
        pool: 'probed',
        origin: 'web-1',
        result: 'healthy',
      });
      return n >= 2 ? n : undefined;
    });
    expect(probes).toBeGreaterThanOrEqual(2);
    expect(
      histogramCount(await scrape(), 'ledge_health_probe_duration_seconds', { pool: 'probed', origin: 'web-1' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('exposes process figures, workerd restarts and the outbox depth', async () => {
    const families = await scrape();
    expect(value(families, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20);
    const cpu = value(families, 'process_cpu_seconds_total');
    expect(cpu).toBeGreaterThan(0);
    expect(families.find((f) => f.name === 'process_cpu_seconds_total')?.type).toBe('COUNTER');
    expect(samples(families, 'ledge_notification_outbox_depth')).toHaveLength(1);

    // Kill a workerd process: the supervisor restarts it and counts the restart.
    const restarts = value(families, 'ledge_workerd_restarts_total', { reason: 'crash' });
    const [pid] = ledge.server.platform.functions.runtime.pids;
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    await waitFor(async () => {
      const n = value(await scrape(), 'ledge_workerd_restarts_total', { reason: 'crash' });
      return n === restarts + 1 ? n : undefined;
    });
    expect(value(await scrape(), 'process_cpu_seconds_total')).toBeGreaterThanOrEqual(cpu);
  });
});
