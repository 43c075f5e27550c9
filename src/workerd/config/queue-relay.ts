import { SERVICE_EXPORT } from '../isolate-modules.ts';
import type { ConfigFiles } from './built.ts';
import { ENGINE_COMPATIBILITY_DATE } from './engines/common.ts';
import type { Service } from './types.ts';

/**
 * The entrypoint name a queue consumer script is served under (service-sockets.ts): no JavaScript identifier
 * starts with `:`, so no export of the script can be mistaken for it.
 */
export const QUEUE_RELAY_ENTRYPOINT = ':queue-consumer';

/** The relay's service for a script's worker service. */
export const queueRelayServiceName = (scriptService: string): string => `${scriptService}#queue-relay`;

/**
 * The queue engine calls `queue(id, messages, metadata)` on its consumer by JS RPC (an RPC connection between
 * processes does not carry the queue event itself): the relay, in the consumer script's process, takes that
 * call and delivers the batch to the script's queue() handler as a real queue event, under the queue's name, through a service binding
 * (`service_binding_extra_handlers` is the relay's flag, not the script's), then answers the engine with what
 * the handler settled: its acks, retries and outcome, as workerd reports them.
 */
const RELAY_SOURCE = `import { WorkerEntrypoint } from 'cloudflare:workers';
export class QueueRelay extends WorkerEntrypoint {
  async queue(queueId, messages) {
    const r = await this.env.SCRIPT.queue(this.env.NAMES[queueId] ?? queueId, messages);
    return {
      outcome: r.outcome,
      ackAll: r.ackAll,
      retryBatch: r.retryBatch,
      explicitAcks: r.explicitAcks,
      retryMessages: r.retryMessages,
    };
  }
}
export default { fetch: () => new Response(null, { status: 404 }) };
`;

/** The relay worker beside a consumer script's worker, bound to the script's default export. */
export function queueRelayService(
  files: ConfigFiles,
  scriptService: string,
  queueNames: Record<string, string>,
): Service {
  return {
    name: queueRelayServiceName(scriptService),
    worker: {
      modules: [{ name: 'queue-relay.js', esModule: files.embed('queue-relay.js', RELAY_SOURCE) }],
      compatibilityDate: ENGINE_COMPATIBILITY_DATE,
      compatibilityFlags: ['service_binding_extra_handlers'],
      bindings: [
        { name: 'SCRIPT', service: { name: scriptService, entrypoint: SERVICE_EXPORT } },
        { name: 'NAMES', json: JSON.stringify(queueNames) },
      ],
    },
  };
}
