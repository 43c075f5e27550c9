import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, functionsPort } from '../workers/helpers.ts';

/** The shape of create-cloudflare's queues starter: fetch() produces, queue() consumes. */
const WORKER = `export default {
  async fetch(request, env) {
    const tag = new URL(request.url).searchParams.get('tag');
    await env.JOBS.send({ tag });
    return new Response('queued ' + tag);
  },
  async queue(batch, env) {
    for (const message of batch.messages) {
      await env.SEEN.put(message.body.tag, batch.queue);
      message.ack();
    }
  },
};
`;

/** The real wrangler 4 CLI's queues commands, and a deploy with queue producers and consumers, unchanged. */
describe('wrangler queues against Ledge', () => {
  let ledge: TestLedge;
  let project: string;
  let kv: string;

  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
  const ok = async (args: string[]) => {
    const result = await wrangler(args);
    expect(result.code, `wrangler ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
    return result.stdout;
  };
  const queue = async (name: string) =>
    (await api(ledge, 'GET', `/accounts/${ledge.accountId}/queues/${name}`)).body.result as {
      queue_id: string;
      consumers: { script_name: string; dead_letter_queue?: string; settings: Record<string, number> }[];
      producers: { script: string }[];
    };

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    project = tempDir('ledge-wrangler-queues-project-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), WORKER);
    kv = (await api(ledge, 'POST', `/accounts/${ledge.accountId}/storage/kv/namespaces`, { title: 'seen' })).body.result
      .id as string;
    writeFileSync(
      join(project, 'wrangler.toml'),
      [
        'name = "qapp"',
        'main = "src/index.js"',
        'compatibility_date = "2025-01-01"',
        'workers_dev = true',
        '',
        '[[kv_namespaces]]',
        'binding = "SEEN"',
        `id = "${kv}"`,
        '',
        '[[queues.producers]]',
        'binding = "JOBS"',
        'queue = "wr-jobs"',
        '',
        '[[queues.consumers]]',
        'queue = "wr-jobs"',
        'max_batch_size = 2',
        'max_batch_timeout = 1',
        'max_retries = 2',
        'dead_letter_queue = "wr-dlq"',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => ledge?.close());

  it('queues create and list', async () => {
    expect(await ok(['queues', 'create', 'wr-jobs'])).toContain("Created queue 'wr-jobs'");
    const again = await wrangler(['queues', 'create', 'wr-jobs']);
    expect(again.code).not.toBe(0);
    expect(again.stdout + again.stderr).toContain('already exists');
    const listed = await ok(['queues', 'list']);
    expect(listed).toContain('wr-jobs');
  });

  it('deploy with [[queues.producers]] and [[queues.consumers]] delivers what the Worker sends', async () => {
    await ok(['deploy']);
    const jobs = await queue('wr-jobs');
    expect(jobs.producers).toEqual([{ type: 'worker', script: 'qapp' }]);
    expect(jobs.consumers).toEqual([
      expect.objectContaining({
        script_name: 'qapp',
        dead_letter_queue: 'wr-dlq',
        settings: expect.objectContaining({ batch_size: 2, max_wait_time_ms: 1000, max_retries: 2 }),
      }),
    ]);
    // Cloudflare makes a dead letter queue that does not exist yet.
    expect((await queue('wr-dlq')).queue_id).toMatch(/^[0-9a-f]{32}$/);
    const host = `qapp.${await accountSubdomain(ledge)}.localhost`;
    const sent = await callFunction(functionsPort(ledge), host, '/?tag=first');
    expect(sent.text).toBe('queued first');
    const delivered = await poll(
      async () => {
        const r = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces/${kv}/values/first`, {
          headers: ledge.tokenHeaders,
        });
        return r.status === 200 ? r.text() : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(delivered).toBe('wr-jobs');
    // A second deploy keeps the one consumer (wrangler updates it in place).
    await ok(['deploy']);
    expect((await queue('wr-jobs')).consumers).toHaveLength(1);
  });

  it('queues consumer remove and add', async () => {
    expect(await ok(['queues', 'consumer', 'remove', 'wr-jobs', 'qapp'])).toContain('Removed consumer');
    expect((await queue('wr-jobs')).consumers).toEqual([]);
    await ok(['queues', 'consumer', 'add', 'wr-jobs', 'qapp', '--batch-size', '7', '--message-retries', '1']);
    expect((await queue('wr-jobs')).consumers).toEqual([
      expect.objectContaining({
        script_name: 'qapp',
        settings: expect.objectContaining({ batch_size: 7, max_retries: 1 }),
      }),
    ]);
    const missing = await wrangler(['queues', 'consumer', 'add', 'wr-jobs', 'no-such-worker']);
    expect(missing.code).not.toBe(0);
  });

  it('queues delete: a queue a Worker produces to stays, another goes', async () => {
    const bound = await wrangler(['queues', 'delete', 'wr-jobs']);
    expect(bound.code).not.toBe(0);
    expect(bound.stdout + bound.stderr).toContain('11005');
    await ok(['queues', 'create', 'wr-tmp']);
    await ok(['queues', 'delete', 'wr-tmp']);
    const listed = await ok(['queues', 'list']);
    expect(listed).not.toContain('wr-tmp');
    expect(listed).toContain('wr-jobs');
  });
});
