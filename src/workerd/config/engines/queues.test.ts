import { describe, expect, it } from 'vitest';
import { buildEnginesConfig } from '../engines-config.ts';
import { serializeConfig } from '../serialize.ts';
import type { Worker } from '../types.ts';
import { queuesEngine, type EngineConsumer } from './queues.ts';

describe("an account's queue engine config", () => {
  const consumer = (queueId: string, script: string, extra: Partial<EngineConsumer> = {}): EngineConsumer => ({
    queueId,
    script,
    socket: `/run/sockets/${script}.sock`,
    maxBatchSize: 5,
    maxBatchTimeout: 0.5,
    maxRetries: 2,
    retryDelay: 10,
    maxConcurrency: 0,
    ...extra,
  });
  const input = { accountId: 'acc', dataDir: '/data/engines/acc', socketDir: '/data/runtime/queues/engines/abc' };

  it("runs workerd's queues.js on the account's disk, with each queue's consumer and settings", () => {
    const consumers = [
      consumer('a'.repeat(32), 'worker', { deadLetterQueue: 'b'.repeat(32) }),
      consumer('b'.repeat(32), 'worker'),
    ];
    const built = buildEnginesConfig(input, [queuesEngine(() => ({ consumers, delays: {} }))]);
    const text = serializeConfig(built.config);
    expect(text).toContain('bundled = "/workerd/queues.js"');
    expect(text).toContain('uniqueKey = "ledge-queues-acc"');
    expect(built.directories).toEqual(['/data/engines/acc/queues']);
    expect(built.config.sockets!.map((s) => s.address)).toEqual(['unix:/data/runtime/queues/engines/abc/queues.sock']);
    const worker = (built.config.services!.find((s) => s.name === 'queues') as { worker: Worker }).worker;
    const json = worker.bindings!.find((b) => b.name === 'CONSUMERS') as { json: string };
    expect(JSON.parse(json.json)).toEqual({
      ['a'.repeat(32)]: {
        consumer: 'CONSUMER_0',
        maxBatchSize: 5,
        maxBatchTimeout: 0.5,
        maxRetries: 2,
        retryDelay: 10,
        maxConcurrency: 0,
        deadLetterQueue: 'b'.repeat(32),
      },
      ['b'.repeat(32)]: expect.objectContaining({ consumer: 'CONSUMER_1' }),
    });
    // Without the extra-handlers flag `queue` is an RPC method: it reaches the gate, then the script's relay.
    expect(worker.compatibilityFlags ?? []).not.toContain('service_binding_extra_handlers');
    expect(worker.bindings!.find((b) => b.name === 'CONSUMER_0')).toEqual({
      name: 'CONSUMER_0',
      service: { name: 'queue-gate:acc/worker', entrypoint: 'QueueGate' },
    });
    // One relay and one gate per consumer script, however many queues it consumes.
    const names = built.config.services!.map((s) => s.name);
    expect(names.filter((n) => n.startsWith('queue-relay:'))).toEqual(['queue-relay:acc/worker']);
    expect(names.filter((n) => n.startsWith('queue-gate:'))).toEqual(['queue-gate:acc/worker']);
    expect(text).toContain('address = "unix:/run/sockets/worker.sock"');
  });

  it('takes the queue from the header, ids of 32 hex digits only', () => {
    const built = buildEnginesConfig(input, [queuesEngine(() => ({ consumers: [], delays: {} }))]);
    const main = String(built.files.find((f) => f.path === 'queues-main.js')?.content);
    expect(main).toContain('"x-ledge-queue"');
    const pattern = new RegExp(JSON.parse(/new RegExp\((".*")\)/.exec(main)![1]!) as string);
    expect([pattern.test('0123456789abcdef0123456789abcdef'), pattern.test('jobs')]).toEqual([true, false]);
  });
});
