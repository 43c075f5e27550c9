import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from '../workers/helpers.ts';

/** A Workflow with a retried step, a sleep and an event, and a fetch handler that drives its binding. */
const WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Orders extends WorkflowEntrypoint {
  async run(event, step) {
    const first = await step.do('charge', { retries: { limit: 3, delay: 10, backoff: 'constant' } }, async () => {
      const n = (await this.env.KV_LIKE?.get?.('x')) ?? 0;
      if (!globalThis.tries) globalThis.tries = 0;
      globalThis.tries++;
      if (globalThis.tries < 2) throw new Error('card declined');
      return event.payload.amount * 2;
    });
    await step.sleep('cool down', 50);
    const approval = await step.waitForEvent('approval', { type: 'approve', timeout: '1 hour' });
    return { first, approved: approval.payload };
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const id = url.searchParams.get('id');
    const json = (v) => Response.json(v);
    try {
      switch (url.pathname) {
        case '/create': return json({ id: (await env.WF.create({ id: id ?? undefined, params: { amount: 21 } })).id });
        case '/batch': return json((await env.WF.createBatch([{ params: { amount: 1 } }, { params: { amount: 2 } }])).map((i) => i.id));
        case '/status': return json(await (await env.WF.get(id)).status());
        case '/pause': await (await env.WF.get(id)).pause(); return json('ok');
        case '/resume': await (await env.WF.get(id)).resume(); return json('ok');
        case '/terminate': await (await env.WF.get(id)).terminate(); return json('ok');
        case '/restart': await (await env.WF.get(id)).restart(); return json('ok');
        case '/send': await (await env.WF.get(id)).sendEvent({ type: 'approve', payload: url.searchParams.get('v') }); return json('ok');
      }
    } catch (e) {
      return new Response(String(e.message), { status: 400 });
    }
    return new Response('?', { status: 404 });
  },
};`;

describe('a Worker bound to a Workflow it exports', () => {
  let ledge: TestLedge;
  let host: string;
  const call = async (path: string) => {
    const r = await callFunction(functionsPort(ledge), host, path);
    return { status: r.status, body: r.status === 200 ? (JSON.parse(r.text) as unknown) : r.text };
  };

  beforeAll(async () => {
    ledge = await startLedge();
    const upload = await uploadScript(ledge, 'orders', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'workflow', name: 'WF', workflow_name: 'orders-flow', class_name: 'Orders' }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'orders')).status).toBe(200);
    host = `orders.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  it('runs an instance through a retried step, a sleep and an event to its output', async () => {
    const created = await call('/create?id=order-1');
    expect(created).toEqual({ status: 200, body: { id: 'order-1' } });
    await waitFor(
      async () => ((await call('/status?id=order-1')).body as { status: string }).status === 'waiting',
      'order-1 waiting',
    );
    expect((await call('/send?id=order-1&v=yes')).status).toBe(200);
    await waitFor(
      async () => ((await call('/status?id=order-1')).body as { status: string }).status === 'complete',
      'order-1 complete',
    );
    expect((await call('/status?id=order-1')).body).toMatchObject({
      status: 'complete',
      output: { first: 42, approved: 'yes' },
    });
  });

  it('refuses a second instance with the same id, and an unknown id', async () => {
    const again = await call('/create?id=order-1');
    expect(again.status).toBe(400);
    expect(String(again.body)).toContain('already exists');
    expect((await call('/status?id=nope')).status).toBe(400);
  });

  it('pauses, resumes, terminates and restarts', async () => {
    await call('/create?id=order-2');
    await waitFor(
      async () => ((await call('/status?id=order-2')).body as { status: string }).status === 'waiting',
      'order-2 waiting',
    );
    await call('/pause?id=order-2');
    expect(((await call('/status?id=order-2')).body as { status: string }).status).toBe('paused');
    await call('/resume?id=order-2');
    await call('/terminate?id=order-2');
    expect(((await call('/status?id=order-2')).body as { status: string }).status).toBe('terminated');
    await call('/restart?id=order-2');
    await waitFor(
      async () => ((await call('/status?id=order-2')).body as { status: string }).status === 'waiting',
      'order-2 waiting',
    );
  });

  it('reaches the Workflow from another Worker of the account through script_name', async () => {
    const caller = await uploadScript(ledge, 'shop', {
      modules: {
        'index.js': `export default {
  async fetch(request, env) {
    const instance = await env.ORDERS.create({ id: 'from-shop', params: { amount: 5 } });
    return Response.json({ id: instance.id, status: (await instance.status()).status });
  },
};`,
      },
      metadata: {
        bindings: [
          {
            type: 'workflow',
            name: 'ORDERS',
            workflow_name: 'orders-flow',
            class_name: 'Orders',
            script_name: 'orders',
          },
        ],
      },
    });
    expect(caller.status, JSON.stringify(caller.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'shop')).status).toBe(200);
    const shop = `shop.${await accountSubdomain(ledge)}.localhost`;
    const created = await waitFor(async () => {
      const r = await callFunction(functionsPort(ledge), shop, '/');
      return r.status === 200 ? (JSON.parse(r.text) as { id: string }) : undefined;
    }, 'the shop creates an instance');
    expect(created.id).toBe('from-shop');
    // The instance is the Workflow's own, run beside the Worker that exports it.
    await waitFor(
      async () => ((await call('/status?id=from-shop')).body as { status: string }).status === 'waiting',
      'from-shop waits',
    );
  });

  it('creates a batch', async () => {
    const batch = await call('/batch');
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(2);
  });
});
