import type { Binding } from '../../script.ts';
import { QUEUE_HEADER } from '../engines/queues.ts';
import type { BindingModule } from './contract.ts';

/**
 * `queue` (a producer): workerd's own queue binding (`send`, `sendBatch`, `metrics`) on an external service to
 * the account's queue engine socket (engine-host.ts), which names the one queue in a header workerd injects on
 * every request: the binding cannot set or change it, so the script sends to that queue and nothing else.
 */
export const queueProducer: BindingModule<Extract<Binding, { type: 'queue' }>> = (
  binding,
  { deployed, engineSockets },
) => {
  if (!engineSockets?.queueSocketPath) throw new Error(`binding ${binding.name}: queue bindings need the queue engine`);
  const account = deployed.script.account_id;
  const service = `queue:${account}/${binding.queue_id}`;
  return {
    bindings: [{ name: binding.name, queue: service }],
    services: [
      {
        name: service,
        external: {
          address: `unix:${engineSockets.queueSocketPath(account)}`,
          http: { injectRequestHeaders: [{ name: QUEUE_HEADER, value: binding.queue_id }] },
        },
      },
    ],
  };
};
