import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, functionsPort, tenant } from '../workers/helpers.ts';

const WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Signup extends WorkflowEntrypoint {
  async run(event, step) {
    const user = await step.do('create user', async () => ({ email: event.payload.email ?? 'nobody' }));
    await step.sleep('settle', '1 second');
    const ok = await step.waitForEvent('confirm', { type: 'confirmed', timeout: '1 hour' });
    return { user, confirmed: ok.payload };
  }
}
export default {
  async fetch(request, env) {
    const instance = await env.SIGNUP.create({ params: { email: 'fn@example.com' } });
    return Response.json({ id: instance.id });
  },
};`;

/** The real wrangler 4 against Ledge: a deploy with [[workflows]], then `wrangler workflows ...` unchanged. */
describe('wrangler workflows against Ledge', () => {
  let ledge: TestLedge;
  let project: string;

  const wrangler = async (args: string[]) => {
    const result = await runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
    return { ...result, output: result.stdout + result.stderr };
  };
  const status = async (id: string) =>
    (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workflows/signup/instances/${id}`)).body.result?.status as
      string | undefined;

  beforeAll(async () => {
    ledge = await startLedge();
    project = tempDir('ledge-wrangler-workflows-');
    writeFileSync(join(project, 'index.js'), WORKER);
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "signup-worker"\nmain = "index.js"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n\n` +
        `[[workflows]]\nname = "signup"\nbinding = "SIGNUP"\nclass_name = "Signup"\n`,
    );
  });
  afterAll(async () => ledge?.close());

  it('deploys, registers the Workflow and lists and describes it', async () => {
    const deployed = await wrangler(['deploy']);
    expect(deployed.code, deployed.output).toBe(0);
    expect(deployed.output).toContain('workflow: signup');
    const listed = await wrangler(['workflows', 'list']);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toContain('signup');
    expect(listed.output).toContain('Signup');
    const described = await wrangler(['workflows', 'describe', 'signup']);
    expect(described.code, described.output).toBe(0);
    expect(described.output).toContain('signup-worker');
  });

  it('triggers an instance, lists and describes it with its steps, sends an event and terminates another', async () => {
    const triggered = await wrangler(['workflows', 'trigger', 'signup', '{"email":"a@example.com"}', '--id', 'first']);
    expect(triggered.code, triggered.output).toBe(0);
    expect(triggered.output).toContain('first');
    await waitFor(async () => (await status('first')) === 'waiting' || undefined, 'first waits');
    const listed = await wrangler(['workflows', 'instances', 'list', 'signup']);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toContain('first');
    const described = await wrangler(['workflows', 'instances', 'describe', 'signup', 'first']);
    expect(described.code, described.output).toBe(0);
    expect(described.output).toContain('create user');
    expect(described.output).toContain('a@example.com');
    const sent = await wrangler([
      'workflows',
      'instances',
      'send-event',
      'signup',
      'first',
      '--type',
      'confirmed',
      '--payload',
      '{"by":"mail"}',
    ]);
    expect(sent.code, sent.output).toBe(0);
    await waitFor(async () => (await status('first')) === 'complete' || undefined, 'first completes');
    const done = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workflows/signup/instances/first`);
    expect(JSON.parse(done.body.result.output as string)).toEqual({
      user: { email: 'a@example.com' },
      confirmed: { by: 'mail' },
    });
    expect((done.body.result.steps as { type: string; name: string }[]).map((s) => [s.type, s.name])).toEqual([
      ['step', 'create user'],
      ['sleep', 'settle'],
      ['waitForEvent', 'confirm'],
    ]);

    // An instance made by the function's binding is the API's too.
    const host = `signup-worker.${await accountSubdomain(ledge)}.localhost`;
    const made = JSON.parse((await callFunction(functionsPort(ledge), host, '/')).text) as { id: string };
    await waitFor(async () => (await status(made.id)) === 'waiting' || undefined, 'the binding instance waits');
    const terminated = await wrangler(['workflows', 'instances', 'terminate', 'signup', made.id]);
    expect(terminated.code, terminated.output).toBe(0);
    expect(await status(made.id)).toBe('terminated');
  });

  it('answers an unknown Workflow with 10200 and another account sees nothing', async () => {
    const missing = await wrangler(['workflows', 'describe', 'nope']);
    expect(missing.code).not.toBe(0);
    expect(missing.output).toContain('10200');
    // Another account: its own name space of Workflows has no "signup", and the first account's is closed to it.
    const other = await tenant(ledge, 'Other');
    const theirs = await api(other, 'GET', `/accounts/${other.accountId}/workflows/signup`);
    expect([theirs.status, theirs.body.errors[0]?.code]).toEqual([404, 10200]);
    expect((await api(other, 'GET', `/accounts/${ledge.accountId}/workflows/signup/instances/first`)).status).toBe(403);
    // Nor can it register a Workflow on a Worker of the first account.
    const put = await api(other, 'PUT', `/accounts/${other.accountId}/workflows/signup`, {
      script_name: 'signup-worker',
      class_name: 'Signup',
    });
    expect([put.status, put.body.errors[0]?.code]).toEqual([400, 10201]);
  });
});
