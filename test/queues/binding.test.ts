import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';

/** Sends what a request says: `/send?delay=` (one JSON body), `/batch` (the request's JSON array), `/big`. */
const PRODUCER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      switch (url.pathname) {
        case '/send': {
          const delay = url.searchParams.get('delay');
          await env.JOBS.send(await request.json(), delay ? { delaySeconds: Number(delay) } : undefined);
          return new Response('sent');
        }
        case '/types':
          await env.JOBS.sendBatch([
            { body: 'plain text', contentType: 'text' },
            { body: { n: 'json' }, contentType: 'json' },
            { body: new Uint8Array([1, 2, 3]), contentType: 'bytes' },
            { body: new Map([['v8', true]]), contentType: 'v8' },
          ]);
          return new Response('sent');
        case '/batch':
          await env.JOBS.sendBatch((await request.json()).map((body) => ({ body })));
          return new Response('sent');
        case '/big':
          await env.JOBS.send('x'.repeat(Number(url.searchParams.get('bytes'))), { contentType: 'text' });
          return new Response('sent');
        case '/many':
          await env.JOBS.sendBatch(Array.from({ length: Number(url.searchParams.get('count')) }, (_, i) => ({ body: i })));
          return new Response('sent');
        case '/late':
          await env.LATE.send(await request.json());
          return new Response('sent');
        case '/fail':
          await env.FAILS.send(await request.json());
          return new Response('sent');
      }
    } catch (error) {
      return new Response(String(error.message), { status: 400 });
    }
    return new Response('unknown', { status: 404 });
  },
};`;

/**
 * Records each message it gets in KV (key: the message's tag), as the batch and the message say. A message
 * with \`retry\` is retried until its third attempt; \`fail\` always throws the whole batch.
 */
const CONSUMER = `export default {
  async queue(batch, env) {
    // A batch with \`all\` in it is retried whole once (retryAll), then acknowledged whole (ackAll).
    if (batch.messages.some((m) => m.body && m.body.all)) {
      for (const m of batch.messages) {
        await env.SEEN.put(batch.queue + ':' + m.body.tag, JSON.stringify({ body: m.body, attempts: m.attempts, size: batch.messages.length }));
      }
      if (batch.messages[0].attempts < 2) batch.retryAll(); else batch.ackAll();
      return;
    }
    for (const message of batch.messages) {
      const body = message.body;
      const shown = body instanceof Map ? { map: Object.fromEntries(body) } : body instanceof ArrayBuffer || ArrayBuffer.isView(body) ? { bytes: [...new Uint8Array(body.buffer ?? body)] } : body;
      const tag = (body && typeof body === 'object' && 'tag' in body) ? body.tag : message.id;
      await env.SEEN.put(batch.queue + ':' + tag, JSON.stringify({ body: shown, attempts: message.attempts, size: batch.messages.length }));
      if (body && body.retry && message.attempts < 3) message.retry();
      else if (body && body.fail) throw new Error('this batch fails');
      else message.ack();
    }
  },
};`;

describe('queues: producer and consumer bindings on workerd queues.js', () => {
  let ledge: TestLedge;
  let host: string;
  let kv: string;
  const call = (path: string, body?: unknown) =>
    callFunction(functionsPort(ledge), host, path, {
      method: body === undefined ? 'GET' : 'POST',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const seen = async (key: string) => {
    const r = await fetch(
      `${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces/${kv}/values/${encodeURIComponent(key)}`,
      { headers: ledge.tokenHeaders },
    );
    return r.status === 200
      ? (JSON.parse(await r.text()) as { body: unknown; attempts: number; size: number })
      : undefined;
  };
  const waitSeen = (key: string, ok: (v: { attempts: number }) => boolean = () => true) =>
    poll(
      async () => {
        const v = await seen(key);
        return v && ok(v) ? v : undefined;
      },
      { timeoutMs: 30_000 },
    );

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    const account = `/accounts/${ledge.accountId}`;
    kv = (await api(ledge, 'POST', `${account}/storage/kv/namespaces`, { title: 'seen' })).body.result.id as string;
    for (const name of ['jobs', 'fails', 'late']) {
      const created = await api(ledge, 'POST', `${account}/queues`, { queue_name: name });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
    const consumer = await uploadScript(ledge, 'consumer', {
      modules: { 'index.js': CONSUMER },
      metadata: { bindings: [{ type: 'kv_namespace', name: 'SEEN', namespace_id: kv }] },
    });
    expect(consumer.status, JSON.stringify(consumer.body)).toBe(200);
    const producer = await uploadScript(ledge, 'producer', {
      modules: { 'index.js': PRODUCER },
      metadata: {
        bindings: [
          { type: 'queue', name: 'JOBS', queue_name: 'jobs' },
          { type: 'queue', name: 'FAILS', queue_name: 'fails' },
          { type: 'queue', name: 'LATE', queue_name: 'late' },
        ],
      },
    });
    expect(producer.status, JSON.stringify(producer.body)).toBe(200);
    await enableWorkersDev(ledge, 'producer');
    host = `producer.${await accountSubdomain(ledge)}.localhost`;
    for (const [queue, settings, dlq] of [
      ['jobs', { batch_size: 5, max_wait_time_ms: 200, max_retries: 5 }, undefined],
      ['fails', { batch_size: 1, max_wait_time_ms: 100, max_retries: 1 }, 'fails-dlq'],
      ['fails-dlq', { batch_size: 1, max_wait_time_ms: 100 }, undefined],
    ] as const) {
      if (queue === 'fails-dlq') continue;
      const added = await api(ledge, 'POST', `${account}/queues/${queue}/consumers`, {
        type: 'worker',
        script_name: 'consumer',
        settings,
        ...(dlq ? { dead_letter_queue: dlq } : {}),
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
    }
    // The dead letter queue was made by the consumer above; its own consumer records what reaches it.
    const added = await api(ledge, 'POST', `${account}/queues/fails-dlq/consumers`, {
      type: 'worker',
      script_name: 'consumer',
      settings: { batch_size: 1, max_wait_time_ms: 100 },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('delivers a sent message to the consumer, under the queue name', async () => {
    expect((await call('/send', { tag: 'hello', n: 1 })).text).toBe('sent');
    const v = await waitSeen('jobs:hello');
    expect(v).toMatchObject({ body: { tag: 'hello', n: 1 }, attempts: 1 });
  });

  it('keeps each content type (text, json, bytes, v8)', async () => {
    expect((await call('/types')).text).toBe('sent');
    const values = await poll(
      async () => {
        const r = await fetch(
          `${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces/${kv}/keys?prefix=jobs:`,
          { headers: ledge.tokenHeaders },
        );
        const keys = ((await r.json()) as { result: { name: string }[] }).result.map((k) => k.name);
        const all = await Promise.all(keys.map(seen));
        const bodies = all.map((v) => JSON.stringify(v?.body));
        return bodies.includes('"plain text"') && bodies.length >= 5 ? bodies : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(values).toEqual(
      expect.arrayContaining(['"plain text"', '{"n":"json"}', '{"bytes":[1,2,3]}', '{"map":{"v8":true}}']),
    );
  });

  it('retries a message the consumer retries, counting attempts', async () => {
    await call('/send', { tag: 'again', retry: true });
    const v = await waitSeen('jobs:again', (x) => x.attempts === 3);
    expect(v?.attempts).toBe(3);
  });

  it('retries a whole batch with retryAll and settles it with ackAll; the backlog empties', async () => {
    expect(
      (
        await call('/batch', [
          { tag: 'all-1', all: true },
          { tag: 'all-2', all: true },
        ])
      ).text,
    ).toBe('sent');
    for (const tag of ['all-1', 'all-2']) expect(await waitSeen(`jobs:${tag}`, (v) => v.attempts === 2)).toBeTruthy();
    const metrics = await poll(
      async () => {
        const answer = await api(ledge, 'GET', `/accounts/${ledge.accountId}/queues/jobs/metrics`);
        return answer.body.result.backlog_count === 0 ? answer.body.result : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(metrics).toMatchObject({ backlog_count: 0, backlog_bytes: 0 });
    expect((await seen('jobs:all-1'))?.attempts).toBe(2);
  });

  it('delivers what was sent before the queue had a consumer once one is added', async () => {
    expect((await call('/late', { tag: 'early' })).text).toBe('sent');
    const added = await api(ledge, 'POST', `/accounts/${ledge.accountId}/queues/late/consumers`, {
      type: 'worker',
      script_name: 'consumer',
      settings: { batch_size: 1, max_wait_time_ms: 100 },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(await waitSeen('late:early')).toMatchObject({ attempts: 1 });
  });

  it("applies the queue's delivery_delay and delivery_paused settings", async () => {
    const late = `/accounts/${ledge.accountId}/queues/late`;
    expect((await api(ledge, 'PATCH', late, { settings: { delivery_delay: 2 } })).status).toBe(200);
    await call('/late', { tag: 'delayed' });
    expect(await seen('late:delayed')).toBeUndefined();
    expect(await waitSeen('late:delayed')).toMatchObject({ attempts: 1 });

    const paused = await api(ledge, 'PATCH', late, { settings: { delivery_delay: 0, delivery_paused: true } });
    expect(paused.body.result.settings).toMatchObject({ delivery_delay: 0, delivery_paused: true });
    await call('/late', { tag: 'held' });
    const held = await poll(
      async () => {
        const metrics = (await api(ledge, 'GET', `${late}/metrics`)).body.result;
        return metrics.backlog_count === 1 ? metrics : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(held).toMatchObject({ backlog_count: 1 });
    expect(await seen('late:held')).toBeUndefined();
    expect((await api(ledge, 'PATCH', late, { settings: { delivery_paused: false } })).status).toBe(200);
    expect(await waitSeen('late:held')).toMatchObject({ attempts: 1 });
  });

  it('waits out delaySeconds before delivery', async () => {
    await call('/send?delay=2', { tag: 'later' });
    expect(await seen('jobs:later')).toBeUndefined();
    expect(await waitSeen('jobs:later')).toMatchObject({ attempts: 1 });
  });

  it('sends a message whose attempts are spent to the dead letter queue', async () => {
    await call('/fail', { tag: 'doomed', fail: true });
    const v = await waitSeen('fails-dlq:doomed');
    expect(v).toMatchObject({ body: { tag: 'doomed', fail: true } });
    expect((await seen('fails:doomed'))?.attempts).toBe(2);
  });

  it("refuses what Cloudflare's limits refuse", async () => {
    const big = await call('/big?bytes=128001');
    expect(big.status).toBe(400);
    // workerd's binding words the engine's 413 this way.
    expect(big.text).toMatch(/Payload Too Large/);
    const many = await call('/many?count=101');
    expect(many.status).toBe(400);
    expect(many.text).toMatch(/Payload Too Large|100/);
    expect((await call('/big?bytes=127000')).text).toBe('sent');
  });
});
