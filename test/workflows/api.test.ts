import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { api, tenant, uploadScript } from '../workers/helpers.ts';

const WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Flow extends WorkflowEntrypoint {
  async run(event, step) {
    await step.do('one', async () => event.payload.n ?? 0);
    const e = await step.waitForEvent('go', { type: 'go', timeout: '1 hour' });
    return e.payload;
  }
}
export default { fetch() { return new Response('ok'); } };`;

const deployFlow = async (who: TestLedge, script: string) => {
  const upload = await uploadScript(who, script, {
    modules: { 'index.js': WORKER },
    metadata: { bindings: [{ type: 'workflow', name: 'FLOW', workflow_name: 'flow', class_name: 'Flow' }] },
  });
  expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
  expect(
    (await api(who, 'PUT', `/accounts/${who.accountId}/workflows/flow`, { script_name: script, class_name: 'Flow' }))
      .status,
  ).toBe(200);
};

/** The Workflows API's refusals (Cloudflare's codes and limits), paging, actions, and one account apart from another. */
describe('the Workflows API', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  const base = (who: TestLedge = ledge) => `/accounts/${who.accountId}/workflows/flow`;
  const code = (answer: { status: number; body: { errors: { code: number }[] } }) => [
    answer.status,
    answer.body.errors[0]?.code,
  ];
  const status = async (id: string, who: TestLedge = ledge) =>
    (await api(who, 'GET', `${base(who)}/instances/${id}`)).body.result?.status as string | undefined;

  beforeAll(async () => {
    ledge = await startLedge();
    other = await tenant(ledge, 'Other');
    await deployFlow(ledge, 'flow-worker');
  });
  afterAll(async () => ledge?.close());

  it('refuses bad input with Cloudflare codes and loses nothing', async () => {
    expect(code(await api(ledge, 'GET', `/accounts/${ledge.accountId}/workflows/nope`))).toEqual([404, 10200]);
    expect(code(await api(ledge, 'POST', `${base()}/instances`, { instance_id: '-bad id' }))).toEqual([400, 10402]);
    expect(code(await api(ledge, 'POST', `${base()}/instances`, { instance_id: 'x'.repeat(101) }))).toEqual([
      400, 10402,
    ]);
    const huge = { params: { blob: 'x'.repeat(1024 * 1024) } };
    expect(code(await api(ledge, 'POST', `${base()}/instances`, huge))).toEqual([400, 10001]);
    expect(code(await api(ledge, 'GET', `${base()}/instances/missing`))).toEqual([404, 10400]);
    expect(code(await api(ledge, 'PATCH', `${base()}/instances/missing/status`, { status: 'pause' }))).toEqual([
      404, 10400,
    ]);
    expect(code(await api(ledge, 'PATCH', `${base()}/instances/missing/status`, { status: 'explode' }))).toEqual([
      400, 10001,
    ]);
    expect(
      code(
        await api(ledge, 'PUT', `/accounts/${ledge.accountId}/workflows/x`, { script_name: 'ghost', class_name: 'C' }),
      ),
    ).toEqual([400, 10201]);
    expect(
      code(
        await api(ledge, 'PUT', `/accounts/${ledge.accountId}/workflows/bad%20name`, {
          script_name: 'flow-worker',
          class_name: 'Flow',
        }),
      ),
    ).toEqual([400, 10001]);
    // A Workflow of a Worker the account does not have is refused at upload, naming the binding.
    const foreign = await uploadScript(ledge, 'caller', {
      metadata: {
        bindings: [{ type: 'workflow', name: 'F', workflow_name: 'flow', class_name: 'Flow', script_name: 'ghost' }],
      },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0]!.message).toContain('Binding "F"');
    expect((await api(ledge, 'GET', `${base()}/instances`)).body.result).toEqual([]);
  });

  it('creates, refuses a second instance of one id, pauses, resumes, takes an event and ends', async () => {
    const created = await api(ledge, 'POST', `${base()}/instances`, { instance_id: 'a1', params: { n: 2 } });
    expect(created.body.result).toMatchObject({ id: 'a1' });
    expect(code(await api(ledge, 'POST', `${base()}/instances`, { instance_id: 'a1' }))).toEqual([409, 10405]);
    await waitFor(async () => (await status('a1')) === 'waiting' || undefined, 'a1 waits');
    expect((await api(ledge, 'PATCH', `${base()}/instances/a1/status`, { status: 'pause' })).body.result).toMatchObject(
      {
        status: 'paused',
      },
    );
    await api(ledge, 'PATCH', `${base()}/instances/a1/status`, { status: 'resume' });
    const big = `{"x":"${'y'.repeat(1024 * 1024)}"}`;
    const tooBig = await fetch(`${ledge.apiUrl}${base()}/instances/a1/events/go`, {
      method: 'POST',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
      body: big,
    });
    expect(tooBig.status).toBe(400);
    expect((await api(ledge, 'POST', `${base()}/instances/a1/events/go`, { ok: 1 })).status).toBe(200);
    await waitFor(async () => (await status('a1')) === 'complete' || undefined, 'a1 completes');
    expect((await api(ledge, 'GET', `${base()}/instances/a1`)).body.result.output).toBe('{"ok":1}');
  });

  it('pages instances with page/per_page, a cursor, and a status filter, and counts them by status', async () => {
    for (const id of ['p1', 'p2', 'p3']) await api(ledge, 'POST', `${base()}/instances`, { instance_id: id });
    const first = await api(ledge, 'GET', `${base()}/instances?per_page=2`);
    expect(first.body.result).toHaveLength(2);
    expect(first.body.result_info).toMatchObject({ total_count: 4, cursor: '2' });
    const next = await api(ledge, 'GET', `${base()}/instances?per_page=2&cursor=2`);
    const ids = [...first.body.result, ...next.body.result].map((i: { id: string }) => i.id);
    expect(new Set(ids)).toEqual(new Set(['a1', 'p1', 'p2', 'p3']));
    const complete = await api(ledge, 'GET', `${base()}/instances?status=complete`);
    expect(complete.body.result.map((i: { id: string }) => i.id)).toEqual(['a1']);
    expect((await api(ledge, 'GET', base())).body.result.instances).toMatchObject({ complete: 1 });
  });

  it("keeps another account out: its own Workflow of the same name has none of this one's instances", async () => {
    expect((await api(other, 'GET', `${base()}/instances/a1`)).status).toBe(403);
    expect(code(await api(other, 'GET', `${base(other)}/instances/a1`))).toEqual([404, 10200]);
    // A binding to this account's Worker by its name resolves in the other account only: there is none.
    const reach = await uploadScript(other, 'thief', {
      metadata: {
        bindings: [
          { type: 'workflow', name: 'F', workflow_name: 'flow', class_name: 'Flow', script_name: 'flow-worker' },
        ],
      },
    });
    expect([reach.status, reach.body.errors[0]?.code]).toEqual([400, 10021]);
    await deployFlow(other, 'flow-worker');
    expect(code(await api(other, 'GET', `${base(other)}/instances/a1`))).toEqual([404, 10400]);
    expect((await api(other, 'GET', `${base(other)}/instances`)).body.result).toEqual([]);
    expect((await api(other, 'POST', `${base(other)}/instances`, { instance_id: 'a1' })).status).toBe(200);
    expect(await status('a1')).toBe('complete');
  });

  it('says when the Worker that ran a Workflow is gone', async () => {
    expect((await api(other, 'GET', base(other))).body.result.script_deleted).toBeUndefined();
    expect(
      (await api(other, 'DELETE', `/accounts/${other.accountId}/workers/scripts/flow-worker?force=true`)).status,
    ).toBe(200);
    expect((await api(other, 'GET', base(other))).body.result.script_deleted).toBe(true);
  });

  it('deletes a Workflow with its instances', async () => {
    expect((await api(ledge, 'DELETE', base())).body.result).toEqual({ status: 'ok', success: true });
    expect(code(await api(ledge, 'GET', base()))).toEqual([404, 10200]);
  });
});
