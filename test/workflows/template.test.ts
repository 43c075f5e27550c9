import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromTemplate } from '../helpers/c3-template.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, functionsPort } from '../workers/helpers.ts';

type Step = { type: string; name: string; success?: boolean | null; finished?: boolean; output?: string | null };

/**
 * create-cloudflare's `hello-world-workflows` starter (TypeScript), deployed unchanged by the real wrangler:
 * its fetch handler creates an instance and reads its status, the instance runs its first step, waits for the
 * `approval` event, takes it when wrangler sends it, and goes on to its next step.
 */
describe("create-cloudflare's hello-world-workflows template", () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('deploys with wrangler, creates an instance from the Worker and resumes it with an event', async () => {
    const project = fromTemplate('hello-world-workflows/ts', 'hello-flow');
    const wrangler = (args: string[]) =>
      runWrangler(args, {
        apiUrl: ledge.apiUrl,
        cwd: project,
        timeoutMs: 120_000,
        env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      });
    const deployed = await wrangler(['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);

    const host = `hello-flow.${await accountSubdomain(ledge)}.localhost`;
    const created = await callFunction(functionsPort(ledge), host, '/');
    expect(created.status, created.text).toBe(200);
    const { id, details } = JSON.parse(created.text) as { id: string; details: { status: string } };
    expect(['queued', 'running', 'waiting']).toContain(details.status);
    const polled = await callFunction(functionsPort(ledge), host, `/?instanceId=${id}`);
    expect(JSON.parse(polled.text)).toMatchObject({ status: { status: expect.any(String) } });

    const base = `/accounts/${ledge.accountId}/workflows/workflow-hello-flow/instances/${id}`;
    const steps = async () => ((await api(ledge, 'GET', base)).body.result?.steps ?? []) as Step[];
    const waiting = await waitFor(
      async () => {
        const all = await steps();
        return all.some((s) => s.type === 'waitForEvent' && s.name === 'request-approval') ? all : undefined;
      },
      'the instance waits for approval',
      { timeoutMs: 30_000 },
    );
    const first = waiting.find((s) => s.name === 'my first step')!;
    expect(first.success).toBe(true);
    expect(JSON.parse(first.output!)).toMatchObject({ files: expect.arrayContaining(['doc_7392_rev3.pdf']) });

    const sent = await wrangler([
      'workflows',
      'instances',
      'send-event',
      'workflow-hello-flow',
      id,
      '--type',
      'approval',
      '--payload',
      '{"approved":true}',
    ]);
    expect(sent.code, sent.stdout + sent.stderr).toBe(0);
    // The wait ends and the next step starts (it fetches a public URL, which this machine may not reach).
    const after = await waitFor(
      async () => {
        const all = await steps();
        return all.some((s) => s.name === 'some other step') ? all : undefined;
      },
      'the instance goes on after the event',
      { timeoutMs: 30_000 },
    );
    expect(after.find((s) => s.name === 'request-approval')).toMatchObject({ finished: true });
  });
});
