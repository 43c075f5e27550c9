import type { Binding } from '../../script.ts';
import { KV_NAMESPACE_HEADER } from '../engines/kv.ts';
import type { BindingModule } from './contract.ts';

/**
 * `kv_namespace`: workerd's kvNamespace binding on an external service to the account's KV engine socket
 * (engine-host.ts), which names the one namespace in a header workerd injects on every request: the binding
 * cannot set or change it, so the script reaches that namespace and nothing else.
 */
export const kvNamespace: BindingModule<Extract<Binding, { type: 'kv_namespace' }>> = (
  binding,
  { deployed, engineSockets },
) => {
  if (!engineSockets) throw new Error('KV bindings need the engine host');
  const account = deployed.script.account_id;
  const service = `kv:${account}/${binding.namespace_id}`;
  return {
    bindings: [{ name: binding.name, kvNamespace: service }],
    services: [
      {
        name: service,
        external: {
          address: `unix:${engineSockets.socketPath('kv', account)}`,
          http: { injectRequestHeaders: [{ name: KV_NAMESPACE_HEADER, value: binding.namespace_id }] },
        },
      },
    ],
  };
};
