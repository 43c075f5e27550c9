import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromTemplate } from '../helpers/c3-template.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../workers/helpers.ts';

/**
 * create-cloudflare's `queues` starter (TypeScript), deployed unchanged by the real wrangler after
 * `wrangler queues create my-queue`: its fetch handler sends each request to the queue, and its queue handler
 * logs every message it is given, which the Worker's tail shows.
 */
describe("create-cloudflare's queues template", () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('deploys with wrangler; each request is sent to the queue and reaches the consumer', async () => {
    const project = fromTemplate('queues/ts', 'queue-starter');
    const wrangler = (args: string[]) =>
      runWrangler(args, {
        apiUrl: ledge.apiUrl,
        cwd: project,
        timeoutMs: 120_000,
        env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      });
    const created = await wrangler(['queues', 'create', 'my-queue']);
    expect(created.code, created.stdout + created.stderr).toBe(0);
    const deployed = await wrangler(['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);

    // Subscribed first (the response headers mean the subscription exists), then the requests.
    const tail = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/queue-starter/tail`, {
      headers: ledge.tokenHeaders,
    });
    expect(tail.status).toBe(200);
    const host = `queue-starter.${await accountSubdomain(ledge)}.localhost`;
    const paths = ['/first', '/second', '/third'];
    for (const path of paths) {
      const sent = await callFunction(functionsPort(ledge), host, path);
      expect(sent.text).toBe('Sent message to the queue');
    }

    const reader = tail.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const processed = () => text.split('\n').filter((line) => line.includes('processed:'));
    const deadline = setTimeout(() => void reader.cancel(), 30_000);
    try {
      while (processed().length < paths.length) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } finally {
      clearTimeout(deadline);
      await reader.cancel();
    }
    const lines = processed();
    expect(lines, text).toHaveLength(paths.length);
    for (const path of paths) expect(lines.some((line) => line.includes(`${path}\\"`))).toBe(true);
  });
});
