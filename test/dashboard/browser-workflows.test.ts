import { describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { api, uploadScript } from '../workers/helpers.ts';
import { browserFixture } from './helpers.ts';

let ledge: TestLedge;
const { signedInPage } = browserFixture(async () => (ledge = await startLedge({ flags: { functionsProcesses: 1 } })));

const WORKER = `import { WorkflowEntrypoint } from 'cloudflare:workers';
export class Review extends WorkflowEntrypoint {
  async run(event, step) {
    await step.do('check', { retries: { limit: 2, delay: 10, backoff: 'constant' } }, async (ctx) => {
      if (ctx.attempt === 1) throw new Error('<i>flaky</i> check');
      return 'checked ' + event.payload.doc;
    });
    await step.waitForEvent('approval', { type: 'approve', timeout: '1 hour' });
  }
}
export default { fetch() { return new Response('ok'); } };`;

describe('dashboard in Chromium: Workflows', () => {
  it("lists a Workflow, its instances and an instance's step history, and terminates it", async () => {
    const upload = await uploadScript(ledge, 'reviews', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'workflow', name: 'R', workflow_name: 'review', class_name: 'Review' }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    const base = `/accounts/${ledge.accountId}/workflows/review`;
    expect((await api(ledge, 'PUT', base, { script_name: 'reviews', class_name: 'Review' })).status).toBe(200);
    await api(ledge, 'POST', `${base}/instances`, { instance_id: 'doc-1', params: { doc: '<b>memo</b>' } });
    await waitFor(
      async () => (await api(ledge, 'GET', `${base}/instances/doc-1`)).body.result?.status === 'waiting' || undefined,
      'doc-1 waits',
    );

    const { page, errors } = await signedInPage();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'review', exact: true }).click();
    await page.getByRole('heading', { name: 'Workflow: review' }).waitFor();
    await page.getByRole('link', { name: 'doc-1' }).click();
    await page.getByRole('heading', { name: 'Instance doc-1' }).waitFor();
    await page.getByText('done after 2 attempts (failed: <i>flaky</i> check)').waitFor();
    await page.getByText('waiting for approve').waitFor();
    await page.getByText('checked <b>memo</b>', { exact: true }).waitFor();
    expect(await page.locator('main b, main i').count()).toBe(0);

    await page.getByRole('button', { name: 'Terminate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Terminate' }).click();
    await page.getByText('terminated (api)').waitFor();
    expect((await api(ledge, 'GET', `${base}/instances/doc-1`)).body.result.status).toBe('terminated');
    expect(errors).toEqual([]);
  });
});
