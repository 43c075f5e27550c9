import type { Binding } from '../../script.ts';
import type { BindingModule } from './contract.ts';

/**
 * `d1`: workerd's own D1 binding (`cloudflare-internal:d1-api`, wrapped over a `fetcher`), as Miniflare
 * wires it, with the fetcher an external service: the database's socket in its account's engine process,
 * whose service carries the database's props (workerd's d1.js answers that one database there and no other).
 */
export const d1Database: BindingModule<Extract<Binding, { type: 'd1' }>> = (binding, { deployed, d1 }) => {
  const account = deployed.script.account_id;
  if (!d1) throw new Error(`binding ${binding.name}: this runtime has no D1 engine`);
  const service = `d1:${account}/${binding.id}`;
  return {
    bindings: [
      {
        name: binding.name,
        wrapped: { moduleName: 'cloudflare-internal:d1-api', innerBindings: [{ name: 'fetcher', service }] },
      },
    ],
    services: [{ name: service, external: { address: d1.address(account, binding.id), http: {} } }],
  };
};
