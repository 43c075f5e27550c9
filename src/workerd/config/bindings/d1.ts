import type { Binding } from '../../script.ts';
import { D1_DATABASE_HEADER } from '../engines/d1.ts';
import type { BindingModule } from './contract.ts';

/**
 * `d1`: workerd's own D1 binding (`cloudflare-internal:d1-api`, wrapped over a `fetcher`), as Miniflare wires
 * it, with the fetcher an external service to the account's D1 engine socket (engine-host.ts), which names the
 * one database in a header workerd injects on every request: the binding cannot set or change it, so the
 * script reaches that database and nothing else.
 */
export const d1Database: BindingModule<Extract<Binding, { type: 'd1' }>> = (binding, { deployed, engineSockets }) => {
  if (!engineSockets) throw new Error(`binding ${binding.name}: D1 bindings need the engine host`);
  const account = deployed.script.account_id;
  const service = `d1:${account}/${binding.id}`;
  return {
    bindings: [
      {
        name: binding.name,
        wrapped: { moduleName: 'cloudflare-internal:d1-api', innerBindings: [{ name: 'fetcher', service }] },
      },
    ],
    services: [
      {
        name: service,
        external: {
          address: `unix:${engineSockets.socketPath('d1', account)}`,
          http: { injectRequestHeaders: [{ name: D1_DATABASE_HEADER, value: binding.id }] },
        },
      },
    ],
  };
};
