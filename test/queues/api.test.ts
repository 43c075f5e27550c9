import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, tenant, uploadScript } from '../workers/helpers.ts';

/** The v4 queues routes: errors as Cloudflare words and numbers them, limits, and one account's queues alone. */
describe('queues API', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  const a = () => `/accounts/${ledge.accountId}/queues`;
  const errorCode = (body: { errors?: { code: number }[] }) => body.errors?.[0]?.code;

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 }, env: { LEDGE_QUEUES_MAX_PER_ACCOUNT: '3' } });
    other = await tenant(ledge, 'Other');
    expect((await uploadScript(ledge, 'worker')).status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('creates, lists by name, renames and deletes a queue', async () => {
    const created = await api(ledge, 'POST', a(), { queue_name: 'orders' });
    expect(created.status).toBe(200);
    const id = created.body.result.queue_id as string;
    expect(created.body.result).toMatchObject({
      queue_name: 'orders',
      consumers: [],
      producers: [],
      settings: { delivery_delay: 0, message_retention_period: 345_600 },
    });
    const listed = await api(ledge, 'GET', `${a()}?name=orders&page=1`);
    expect(listed.body.result.map((q: { queue_id: string }) => q.queue_id)).toEqual([id]);
    expect((await api(ledge, 'GET', `${a()}?name=nothing`)).body.result).toEqual([]);
    const renamed = await api(ledge, 'PATCH', `${a()}/${id}`, { queue_name: 'orders-2' });
    expect(renamed.body.result.queue_name).toBe('orders-2');
    expect((await api(ledge, 'GET', `${a()}/orders-2`)).body.result.queue_id).toBe(id);
    expect((await api(ledge, 'DELETE', `${a()}/${id}`)).status).toBe(200);
    const gone = await api(ledge, 'GET', `${a()}/${id}`);
    expect([gone.status, errorCode(gone.body)]).toEqual([404, 11000]);
  });

  it("refuses bad names, duplicates and more queues than the account's limit", async () => {
    const bad = await api(ledge, 'POST', a(), { queue_name: 'Not_Valid!' });
    expect([bad.status, errorCode(bad.body)]).toEqual([400, 11003]);
    const missing = await api(ledge, 'POST', a(), {});
    expect([missing.status, errorCode(missing.body)]).toEqual([400, 10026]);
    expect((await api(ledge, 'POST', a(), { queue_name: 'one' })).status).toBe(200);
    const twice = await api(ledge, 'POST', a(), { queue_name: 'one' });
    expect([twice.status, errorCode(twice.body)]).toEqual([409, 11009]);
    expect((await api(ledge, 'POST', a(), { queue_name: 'two' })).status).toBe(200);
    expect((await api(ledge, 'POST', a(), { queue_name: 'three' })).status).toBe(200);
    const fourth = await api(ledge, 'POST', a(), { queue_name: 'four' });
    expect([fourth.status, errorCode(fourth.body)]).toEqual([400, 11010]);
    // Another account has its own count and its own names.
    expect((await api(other, 'POST', `/accounts/${other.accountId}/queues`, { queue_name: 'one' })).status).toBe(200);
  });

  it('checks consumers: a Worker of the account, one per queue, worker consumers only', async () => {
    const noWorker = await api(ledge, 'POST', `${a()}/two/consumers`, { type: 'worker', script_name: 'ghost' });
    expect([noWorker.status, errorCode(noWorker.body)]).toEqual([404, 10007]);
    const pull = await api(ledge, 'POST', `${a()}/two/consumers`, { type: 'http_pull' });
    expect(pull.status).toBe(400);
    const badSettings = await api(ledge, 'POST', `${a()}/two/consumers`, {
      type: 'worker',
      script_name: 'worker',
      settings: { batch_size: 101 },
    });
    expect([badSettings.status, errorCode(badSettings.body)]).toEqual([400, 10026]);
    const self = await api(ledge, 'POST', `${a()}/two/consumers`, {
      type: 'worker',
      script_name: 'worker',
      dead_letter_queue: 'two',
    });
    expect(self.status).toBe(400);
    const added = await api(ledge, 'POST', `${a()}/two/consumers`, { type: 'worker', script_name: 'worker' });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.result).toMatchObject({
      type: 'worker',
      script_name: 'worker',
      queue_name: 'two',
      settings: { batch_size: 10, max_retries: 3, max_wait_time_ms: 5000, retry_delay: 0 },
    });
    const again = await api(ledge, 'POST', `${a()}/two/consumers`, { type: 'worker', script_name: 'worker' });
    expect([again.status, errorCode(again.body)]).toEqual([409, 11004]);
    const id = added.body.result.consumer_id as string;
    const updated = await api(ledge, 'PUT', `${a()}/two/consumers/${id}`, {
      type: 'worker',
      script_name: 'worker',
      settings: { batch_size: 50, retry_delay: 30 },
    });
    expect(updated.body.result.settings).toMatchObject({ batch_size: 50, retry_delay: 30 });
    expect((await api(ledge, 'DELETE', `${a()}/two/consumers/${id}`)).status).toBe(200);
    const gone = await api(ledge, 'DELETE', `${a()}/two/consumers/${id}`);
    expect([gone.status, errorCode(gone.body)]).toEqual([404, 11006]);
  });

  it("keeps one account's queues from every other account", async () => {
    const mine = (await api(ledge, 'GET', `${a()}/two`)).body.result.queue_id as string;
    const o = `/accounts/${other.accountId}/queues`;
    for (const [method, path, body] of [
      ['GET', `${o}/${mine}`, undefined],
      ['PATCH', `${o}/${mine}`, { queue_name: 'stolen' }],
      ['DELETE', `${o}/${mine}`, undefined],
      ['POST', `${o}/${mine}/consumers`, { type: 'worker', script_name: 'worker' }],
    ] as const) {
      const answer = await api(other, method, path, body);
      expect([answer.status, errorCode(answer.body)], `${method} ${path}`).toEqual([404, 11000]);
    }
    // Through this account's URL, with the other account's token: refused outright.
    expect((await api(other, 'GET', `${a()}/${mine}`)).status).toBe(403);
    // A Worker of the other account cannot bind this account's queue by its name.
    const upload = await uploadScript(other, 'thief', {
      metadata: { bindings: [{ type: 'queue', name: 'Q', queue_name: 'two' }] },
    });
    expect([upload.status, errorCode(upload.body as { errors?: { code: number }[] })]).toEqual([400, 11000]);
    expect((await api(ledge, 'GET', `${a()}/two`)).body.result.queue_name).toBe('two');
  });
});
