import { afterEach, describe, expect, it } from 'vitest';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge, type TestLedge } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, uploadScript } from '../workers/helpers.ts';

/** Sends `?tag=` to the queue, every other one delayed, so some wait in the queue when the server dies. */
const PRODUCER = `export default {
  async fetch(request, env) {
    const tag = Number(new URL(request.url).searchParams.get('tag'));
    await env.JOBS.send({ tag }, tag % 2 ? { delaySeconds: 2 } : undefined);
    return new Response('sent ' + tag);
  },
};`;

/** Records every message in KV before acknowledging it. */
const CONSUMER = `export default {
  async queue(batch, env) {
    for (const message of batch.messages) {
      await env.SEEN.put('tag-' + message.body.tag, String(message.attempts));
      message.ack();
    }
  },
};`;

const asTestLedge = (server: SpawnedLedge): TestLedge =>
  ({
    apiUrl: server.apiUrl,
    accountId: TEST_CREDENTIALS.accountId,
    tokenHeaders: { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` },
  }) as unknown as TestLedge;

describe('queues: at least once through a kill -9 of the server', () => {
  const servers: SpawnedLedge[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop('SIGKILL');
  });

  it('delivers every acknowledged send after the server is killed with SIGKILL mid-stream and started again', async () => {
    const dataDir = tempDir('ledge-queues-kill-');
    const first = await spawnLedge(dataDir);
    servers.push(first);
    const ledge = asTestLedge(first);
    const account = `/accounts/${ledge.accountId}`;
    const kv = (await api(ledge, 'POST', `${account}/storage/kv/namespaces`, { title: 'seen' })).body.result
      .id as string;
    expect((await api(ledge, 'POST', `${account}/queues`, { queue_name: 'jobs' })).status).toBe(200);
    const consumer = await uploadScript(ledge, 'consumer', {
      modules: { 'index.js': CONSUMER },
      metadata: { bindings: [{ type: 'kv_namespace', name: 'SEEN', namespace_id: kv }] },
    });
    expect(consumer.status, JSON.stringify(consumer.body)).toBe(200);
    const producer = await uploadScript(ledge, 'producer', {
      modules: { 'index.js': PRODUCER },
      metadata: { bindings: [{ type: 'queue', name: 'JOBS', queue_name: 'jobs' }] },
    });
    expect(producer.status, JSON.stringify(producer.body)).toBe(200);
    await enableWorkersDev(ledge, 'producer');
    const added = await api(ledge, 'POST', `${account}/queues/jobs/consumers`, {
      type: 'worker',
      script_name: 'consumer',
      settings: { batch_size: 10, max_wait_time_ms: 100 },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const host = `producer.${await accountSubdomain(ledge)}.localhost`;

    // Four senders keep sending; the server is killed once 150 sends are acknowledged, with more in flight.
    const acknowledged = new Set<number>();
    let next = 0;
    let killed = false;
    const sender = async () => {
      while (!killed) {
        const tag = next++;
        try {
          const answer = await callFunction(Number(first.info['functions_port']), host, `/?tag=${tag}`);
          if (answer.text === `sent ${tag}`) acknowledged.add(tag);
        } catch {
          // A send the kill cut short was never acknowledged: it may or may not arrive.
        }
        if (acknowledged.size >= 150 && !killed) {
          killed = true;
          await first.stop('SIGKILL');
        }
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    expect(acknowledged.size).toBeGreaterThanOrEqual(150);

    const second = await spawnLedge(dataDir);
    servers.push(second);
    const seen = async (): Promise<Set<number>> => {
      const keys = new Set<number>();
      let cursor = '';
      do {
        const r = await fetch(
          `${second.apiUrl}${account}/storage/kv/namespaces/${kv}/keys?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
          { headers: ledge.tokenHeaders },
        );
        const body = (await r.json()) as { result: { name: string }[]; result_info: { cursor?: string } };
        for (const key of body.result) keys.add(Number(key.name.slice('tag-'.length)));
        cursor = body.result_info.cursor ?? '';
      } while (cursor);
      return keys;
    };
    const missing = await poll(
      async () => {
        const got = await seen();
        const lost = [...acknowledged].filter((tag) => !got.has(tag));
        return lost.length === 0 ? lost : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const finalSeen = await seen();
    // Counted: no acknowledged send is lost.
    expect(missing ?? [...acknowledged].filter((tag) => !finalSeen.has(tag))).toEqual([]);
    expect([...acknowledged].filter((tag) => finalSeen.has(tag)).length).toBe(acknowledged.size);
  }, 180_000);
});
