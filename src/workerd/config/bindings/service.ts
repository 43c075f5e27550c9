import { SERVICE_EXPORT } from '../../isolate-modules.ts';
import type { Binding } from '../../script.ts';
import { DEFAULT_ENTRYPOINT, SERVICE_RPC_HOST } from '../../service-sockets.ts';
import type { BindingModule } from './contract.ts';

/**
 * `service`: a binding to another script of the same account (or to the script itself), for `fetch` and JS
 * RPC. Another script runs in a process of its own, so the binding is an `external` service at the socket
 * where that process serves the entrypoint (service-sockets.ts), speaking HTTP and, through
 * `capnpConnectHost`, Cap'n Proto RPC. A binding to the script itself stays in the process.
 */
export const serviceBinding: BindingModule<Extract<Binding, { type: 'service' }>> = (binding, context) => {
  const { account_id: account, name: self } = context.deployed.script;
  const entrypoint = binding.entrypoint ?? DEFAULT_ENTRYPOINT;
  if (binding.service === self) {
    const own = `${account}/${self}`;
    return {
      bindings: [
        {
          name: binding.name,
          service: { name: own, entrypoint: entrypoint === DEFAULT_ENTRYPOINT ? SERVICE_EXPORT : entrypoint },
        },
      ],
    };
  }
  if (!context.serviceSocket) throw new Error(`service binding ${binding.name}: the runtime has no service sockets`);
  const name = `service:${account}/${binding.service}#${entrypoint}`;
  return {
    bindings: [{ name: binding.name, service: name }],
    services: [
      {
        name,
        external: {
          address: `unix:${context.serviceSocket(account, binding.service, entrypoint)}`,
          http: { capnpConnectHost: SERVICE_RPC_HOST },
        },
      },
    ],
  };
};
