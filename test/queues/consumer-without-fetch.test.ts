import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { poll } from '../helpers/wait.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';

const PRODUCER = `export default {
  async fetch(request, env) {
    await env.JOBS.send(await request.json());
    return new Response('sent');
  },
};`;

/** A consumer as most are: a queue() handler and nothing else (here as an object, or as a WorkerEntrypoint class). */
const CONSUMERS = {
  object: `export default {
  async queue(batch, env) {
    for (const message of batch.messages) await env.SEEN.put(message.body.tag, 'seen');
  },
};`,
  class: `import { WorkerEntrypoint } from 'cloudflare:workers';
export default class extends WorkerEntrypoint {
  async queue(batch) {
    for (const message of batch.messages) await this.env.SEEN.put(message.body.tag, 'seen');
  }
};`,
};

describe.each(Object.keys(CONSUMERS) as (keyof typeof CONSUMERS)[])(
  'a queue consumer Worker without a fetch handler (%s)',
  (kind) => {
    let ledge: TestLedge;
    let account: string;
    let kv: string;
    const lines: string[] = [];

    beforeAll(async () => {
      ledge = await startLedge({
        flags: { functionsProcesses: 1 },
        logger: createLogger('info', systemClock, {}, (line) => void lines.push(line), 'json'),
      });
      account = `/accounts/${ledge.accountId}`;
      kv = (await api(ledge, 'POST', `${account}/storage/kv/namespaces`, { title: 'seen' })).body.result.id as string;
      expect((await api(ledge, 'POST', `${account}/queues`, { queue_name: 'jobs' })).status).toBe(200);
      const consumer = await uploadScript(ledge, 'consumer', {
        modules: { 'index.js': CONSUMERS[kind] },
        metadata: { bindings: [{ type: 'kv_namespace', name: 'SEEN', namespace_id: kv }] },
      });
      expect(consumer.status, JSON.stringify(consumer.body)).toBe(200);
      const producer = await uploadScript(ledge, 'producer', {
        modules: { 'index.js': PRODUCER },
        metadata: { bindings: [{ type: 'queue', name: 'JOBS', queue_name: 'jobs' }] },
      });
      expect(producer.status, JSON.stringify(producer.body)).toBe(200);
      await enableWorkersDev(ledge, 'producer');
      await enableWorkersDev(ledge, 'consumer');
      const added = await api(ledge, 'POST', `${account}/queues/jobs/consumers`, {
        type: 'worker',
        script_name: 'consumer',
        settings: { batch_size: 1, max_wait_time_ms: 100 },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
    });
    afterAll(async () => ledge?.close());

    it('gets its batches, and its process says nothing of the missing fetch handler', async () => {
      const host = `producer.${await accountSubdomain(ledge)}.localhost`;
      const sent = await callFunction(functionsPort(ledge), host, '/', {
        method: 'POST',
        body: JSON.stringify({ tag: 'one' }),
      });
      expect(sent.text).toBe('sent');
      await poll(
        async () => {
          const r = await fetch(`${ledge.apiUrl}${account}/storage/kv/namespaces/${kv}/values/one`, {
            headers: ledge.tokenHeaders,
          });
          return r.status === 200 ? true : undefined;
        },
        { timeoutMs: 30_000 },
      );
      // The request chart scrapes every loaded script's counts first (the ping service asks each by fetch);
      // twice, so what the first made workerd write has reached the log before the second is answered.
      for (let i = 0; i < 2; i++) {
        const history = await api(ledge, 'GET', `${account}/workers/scripts/consumer/requests/history?range=hour`);
        expect(history.status, JSON.stringify(history.body)).toBe(200);
      }
      expect(lines.filter((line) => /lack a handler/i.test(line))).toEqual([]);
      // HTTP to it is still refused as a Worker without fetch() is: the exception, shown as error 1101.
      const answer = await callFunction(
        functionsPort(ledge),
        `consumer.${await accountSubdomain(ledge)}.localhost`,
        '/',
      );
      expect([answer.status, answer.text]).toEqual([500, 'error code: 1101']);
    });
  },
);
