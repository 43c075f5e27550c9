import { assetsService, assetsServiceName } from '../assets-service.ts';
import type { PlatformBindingModule } from './contract.ts';

/**
 * A version's static assets in front of its worker: workerd's `assets` service (which calls the worker),
 * and the `assets` binding (`env.ASSETS`) on its `AssetWorker` entrypoint, which serves files only and never
 * calls the worker again. The binding's name is the user's: it comes with the version's assets, not with
 * the bindings of other kinds.
 */
export const assetsBinding: PlatformBindingModule = ({ deployed }) => {
  const userWorker = `${deployed.script.account_id}/${deployed.script.name}`;
  const service = assetsService(deployed, { userWorker });
  if (!service) return { bindings: [] };
  const name = deployed.assets?.binding;
  return {
    bindings: name ? [{ name, service: { name: assetsServiceName(deployed), entrypoint: 'AssetWorker' } }] : [],
    services: [service],
  };
};
