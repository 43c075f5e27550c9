import { join } from 'node:path';
import { SERVICE_RPC_HOST } from '../../service-sockets.ts';
import type { Service, Worker_Binding } from '../types.ts';
import type { EngineKind } from './contract.ts';
import { ENGINE_COMPATIBILITY_DATE, engineSocket } from './common.ts';
import { engineShim } from './shim.ts';

/** The header that names the queue a producer's request is for (injected by the binding's external service). */
export const QUEUE_HEADER = 'x-ledge-queue';
/** Queue ids are Ledge's own: 32 hex digits. */
const QUEUE_ID = /^[0-9a-f]{32}$/;

/**
 * Between the engine and a consumer's relay: queues.js counts a delivery that throws as a failed attempt, and
 * the relay answers every handler outcome (an exception included) without throwing, so a throw here means the
 * consumer's process could not be reached (not started yet after a restart, between two processes on a
 * redeploy). That is no attempt of the consumer's: the gate tries again, waiting longer each time, for up to
 * `GATE_WAIT_MS` (well inside the engine's 16-minute lease), before letting it count.
 */
const GATE_WAIT_MS = 10 * 60 * 1000;
const GATE_SOURCE = `import { WorkerEntrypoint } from 'cloudflare:workers';
export class QueueGate extends WorkerEntrypoint {
  async queue(queueId, messages, metadata) {
    const started = Date.now();
    for (let wait = 100; ; wait = Math.min(wait * 2, 5000)) {
      try {
        return await this.env.RELAY.queue(queueId, messages, metadata);
      } catch (error) {
        if (Date.now() - started > ${GATE_WAIT_MS}) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
export default { fetch: () => new Response(null, { status: 404 }) };
`;

/**
 * A queue's default delivery delay (its `delivery_delay` setting), by queue id in `DELAYS`: a send that names no
 * delay of its own (workerd's binding then sends no `X-Msg-Delay-Secs`) gets the queue's; a batch's messages
 * that name theirs keep them (queues.js reads them from the body).
 */
const DELAY_SOURCE = `import engine from './queues.js';
export * from './queues.js';
export default {
  fetch(request, env, ctx) {
    const delay = env.DELAYS[ctx.props.queue];
    if (delay && !request.headers.has('X-Msg-Delay-Secs')) {
      const headers = new Headers(request.headers);
      headers.set('X-Msg-Delay-Secs', String(delay));
      request = new Request(request, { headers });
    }
    return engine.fetch(request, env, ctx);
  },
};
`;

/** One queue's consumer as the engine takes it: a script of the account and production's settings. */
export interface EngineConsumer {
  queueId: string;
  /** The consumer script: its process serves the queue relay (config/queue-relay.ts) on `socket`. */
  script: string;
  socket: string;
  maxBatchSize: number;
  /** Seconds. */
  maxBatchTimeout: number;
  maxRetries: number;
  /** Seconds. */
  retryDelay: number;
  /** 0: no limit. */
  maxConcurrency: number;
  /** The dead letter queue's id, or none. */
  deadLetterQueue?: string | undefined;
}

/**
 * Queues: workerd's bundled `/workerd/queues.js` (its header states this config), one account's queues as
 * SQLite-backed `QueueShard` Durable Objects on the account's disk. Producers reach it through the shim, which
 * takes the queue's id from a header their binding's external service injects. Each consumer is a binding to
 * the consumer script's queue relay, in the script's own process: queues.js calls `queue(name, messages)` on
 * it (through a gate that waits for it to be reachable), a JS RPC call (an RPC connection cannot carry the
 * `queue` event itself), and the relay hands the batch
 * to the script's queue() handler as a real event and returns its acks and retries. So the engine runs
 * without `service_binding_extra_handlers`: `queue` on a binding is then an RPC method. The consumers are
 * config: `consumersOf` is read each time the account's process starts (a consumer change restarts it).
 */
export function queuesEngine(
  configOf: (accountId: string) => { consumers: readonly EngineConsumer[]; delays: Record<string, number> },
): EngineKind {
  return {
    name: 'queues',
    build({ accountId, dataDir, socketDir }, files) {
      const storage = join(dataDir, 'queues');
      const shim = engineShim({
        engineModule: 'queues-delay.js',
        header: QUEUE_HEADER,
        prop: 'queue',
        idPattern: QUEUE_ID,
        // In a cluster, a call to a shard that is being handed over is made once more (shim.ts).
        namespaceBinding: 'SHARD',
      });
      const { consumers: configured, delays } = configOf(accountId);
      const consumers: Record<string, unknown> = {};
      const bindings: Worker_Binding[] = [];
      const relays: Service[] = [];
      configured.forEach((consumer, index) => {
        const binding = `CONSUMER_${index}`;
        const relay = `queue-relay:${accountId}/${consumer.script}`;
        const gate = `queue-gate:${accountId}/${consumer.script}`;
        consumers[consumer.queueId] = {
          consumer: binding,
          maxBatchSize: consumer.maxBatchSize,
          maxBatchTimeout: consumer.maxBatchTimeout,
          maxRetries: consumer.maxRetries,
          retryDelay: consumer.retryDelay,
          maxConcurrency: consumer.maxConcurrency,
          ...(consumer.deadLetterQueue ? { deadLetterQueue: consumer.deadLetterQueue } : {}),
        };
        bindings.push({ name: binding, service: { name: gate, entrypoint: 'QueueGate' } });
        if (!relays.some((service) => service.name === relay)) {
          relays.push(
            {
              name: relay,
              external: { address: `unix:${consumer.socket}`, http: { capnpConnectHost: SERVICE_RPC_HOST } },
            },
            {
              name: gate,
              worker: {
                modules: [{ name: 'queue-gate.js', esModule: files.embed('queue-gate.js', GATE_SOURCE) }],
                compatibilityDate: ENGINE_COMPATIBILITY_DATE,
                bindings: [{ name: 'RELAY', service: relay }],
              },
            },
          );
        }
      });
      return {
        services: [
          {
            name: 'queues',
            worker: {
              modules: [
                { name: 'queues-main.js', esModule: files.embed('queues-main.js', shim) },
                { name: 'queues-delay.js', esModule: files.embed('queues-delay.js', DELAY_SOURCE) },
                { name: 'queues.js', bundled: '/workerd/queues.js' },
              ],
              compatibilityDate: ENGINE_COMPATIBILITY_DATE,
              bindings: [
                { name: 'SHARD', durableObjectNamespace: { className: 'QueueShard' } },
                { name: 'CONSUMERS', json: JSON.stringify(consumers) },
                { name: 'DELAYS', json: JSON.stringify(delays) },
                ...bindings,
              ],
              // The unique key and the disk are where messages live: changing either starts empty.
              durableObjectNamespaces: [
                { className: 'QueueShard', uniqueKey: `ledge-queues-${accountId}`, enableSql: true },
              ],
              durableObjectStorage: { localDisk: 'queues-storage' },
            },
          },
          { name: 'queues-storage', disk: { path: storage, writable: true } },
          ...relays,
        ],
        socket: engineSocket('queues', socketDir, 'queues'),
        directories: [storage],
      };
    },
  };
}
