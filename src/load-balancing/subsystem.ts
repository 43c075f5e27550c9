import type { Subsystem } from '../api/subsystem.ts';
import { loadBalancingRoutes } from './routes.ts';
import { LoadBalancing } from './service.ts';

export interface LoadBalancingSubsystem extends Subsystem {
  service: LoadBalancing;
}

/** Pools, monitors, previews and the health checker (its background service). */
export function createLoadBalancingSubsystem(
  deps: ConstructorParameters<typeof LoadBalancing>[0],
): LoadBalancingSubsystem {
  const service = new LoadBalancing(deps);
  return {
    name: 'load-balancing',
    service,
    background: [service.checker],
    mountRoutes: (api) => api.route('/accounts/:account_id/load_balancers', loadBalancingRoutes(service)),
  };
}
