import { afterAll, describe, expect, it } from 'vitest';
import { spawnLedge, TEST_CREDENTIALS, tempDir, type SpawnedLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { api, uploadScript } from '../workers/helpers.ts';

/**
 * A step whose first attempt fails and is retried after a delay, a sleep, and a wait for an event: the server is
 * killed with SIGKILL (its workerd processes go with it) during each, and the instance resumes where it was.
 */
const WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Job extends WorkflowEntrypoint {
  async run(event, step) {
    const first = await step.do('first', async () => crypto.randomUUID());
    const second = await step.do('flaky', { retries: { limit: 3, delay: '4 seconds', backoff: 'constant' } }, async (ctx) => {
      if (ctx.attempt === 1) throw new Error('the first attempt fails');
      return 'ok on attempt ' + ctx.attempt;
    });
    await step.sleep('nap', '4 seconds');
    const go = await step.waitForEvent('go', { type: 'go', timeout: '1 hour' });
    return { first, second, go: go.payload };
  }
}
export default { fetch() { return new Response('job'); } };`;

type Step = {
  type: string;
  name: string;
  output?: string | null;
  finished?: boolean;
  attempts?: { success: boolean }[];
};
type Instance = { status: string; output: string; steps: Step[] };

describe('a Workflow instance across kill -9 of the server', () => {
  const dataDir = tempDir('ledge-workflows-kill-');
  let server: SpawnedLedge | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  const asLedge = (s: SpawnedLedge) =>
    ({
      apiUrl: s.apiUrl,
      accountId: TEST_CREDENTIALS.accountId,
      tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
    }) as unknown as TestLedge;
  const base = `/accounts/${TEST_CREDENTIALS.accountId}/workflows/job`;
  const describeInstance = async (): Promise<Instance | undefined> => {
    const answer = await api(asLedge(server!), 'GET', `${base}/instances/k1`).catch(() => undefined);
    return answer?.status === 200 ? (answer.body.result as Instance) : undefined;
  };
  const until = (what: string, check: (i: Instance) => boolean) =>
    waitFor(
      async () => {
        const instance = await describeInstance();
        return instance && check(instance) ? instance : undefined;
      },
      what,
      { timeoutMs: 60_000 },
    );
  const killAndRestart = async () => {
    await server!.stop('SIGKILL');
    server = await spawnLedge(dataDir);
  };
  const step = (i: Instance, name: string) => i.steps.find((s) => s.name === name);

  it('resumes a retry delay, a sleep and an event wait where they were, never running a finished step again', async () => {
    server = await spawnLedge(dataDir);
    const ledge = asLedge(server);
    const upload = await uploadScript(ledge, 'jobs', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'workflow', name: 'JOB', workflow_name: 'job', class_name: 'Job' }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await api(ledge, 'PUT', base, { script_name: 'jobs', class_name: 'Job' })).status).toBe(200);
    const created = await waitFor(
      async () => {
        const answer = await api(ledge, 'POST', `${base}/instances`, { instance_id: 'k1', params: { n: 1 } });
        return answer.status === 200 ? answer : undefined;
      },
      'the Workflow takes an instance',
      { timeoutMs: 30_000 },
    );
    expect(created.body.result).toMatchObject({ id: 'k1' });

    // Killed while the failed attempt waits out its retry delay.
    const failedOnce = await until(
      'the first attempt fails',
      (i) => step(i, 'flaky')?.attempts?.[0]?.success === false,
    );
    const first = step(failedOnce, 'first')!.output;
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    await killAndRestart();

    // Killed while it sleeps.
    await until('the retry succeeds and the sleep starts', (i) => step(i, 'nap') !== undefined);
    await killAndRestart();

    // Killed while it waits for its event.
    await until('the wait for the event starts', (i) => step(i, 'go') !== undefined && i.status === 'waiting');
    await killAndRestart();

    const sent = await waitFor(
      async () => {
        const answer = await api(asLedge(server!), 'POST', `${base}/instances/k1/events/go`, { approved: true });
        return answer.status === 200 ? answer : undefined;
      },
      'the event is taken',
      { timeoutMs: 30_000 },
    );
    expect(sent.body.result).toMatchObject({ instanceId: 'k1' });
    const done = await until('the instance completes', (i) => i.status === 'complete');
    expect(JSON.parse(done.output)).toEqual({ first, second: 'ok on attempt 2', go: { approved: true } });
    // The first step ran once (its recorded output is what run() got back), the flaky one twice.
    expect(done.steps.map((s) => [s.type, s.name])).toEqual([
      ['step', 'first'],
      ['step', 'flaky'],
      ['sleep', 'nap'],
      ['waitForEvent', 'go'],
    ]);
    expect(step(done, 'first')!.attempts!.map((a) => a.success)).toEqual([true]);
    expect(step(done, 'flaky')!.attempts!.map((a) => a.success)).toEqual([false, true]);
    expect(step(done, 'nap')!.finished).toBe(true);
  });
});
