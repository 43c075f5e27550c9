import type { Subsystem } from '../api/subsystem.ts';
import { loadBalancerRoutes, type ZoneResolver } from './load-balancers/routes.ts';
import { loadBalancingRoutes } from './routes.ts';
import { LoadBalancing } from './service.ts';

export interface LoadBalancingSubsystem extends Subsystem {
  service: LoadBalancing;
}

/**
 * Pools, monitors, previews, zone load balancers and the health checker (its background service).
 * `resolveZone` answers a caller's zone (404 for unknown and foreign ones) for the zone-scoped routes.
 */
export function createLoadBalancingSubsystem(
  deps: ConstructorParameters<typeof LoadBalancing>[0] & { resolveZone: ZoneResolver },
): LoadBalancingSubsystem {
  const service = new LoadBalancing(deps);
  return {
    name: 'load-balancing',
    service,
    background: [service.checker],
    mountRoutes: (api) => {
      api.route('/accounts/:account_id/load_balancers', loadBalancingRoutes(service));
      api.route('/zones/:zone_id/load_balancers', loadBalancerRoutes(service.loadBalancers, deps.resolveZone));
    },
  };
}
