import type { Pool } from '../pool-schemas.ts';

/**
 * What the data plane needs to know about a load balancer: the fields of Cloudflare's LoadBalancer
 * (names as in the SDK's `load-balancers.d.ts`) that steer traffic. The load balancer store's
 * directory satisfies this shape; the traffic engine never reads the store itself.
 */
export interface TrafficLoadBalancer {
  id: string;
  /** The hostname clients use, lowercased. */
  name: string;
  enabled: boolean;
  /** Pool ids in failover order. */
  default_pools: string[];
  fallback_pool: string;
  /** off, "", random, least_outstanding_requests, least_connections; anything else is answered 501. */
  steering_policy?: string | undefined;
  random_steering?:
    { default_weight?: number | undefined; pool_weights?: Record<string, number> | undefined } | undefined;
  /** none, "", cookie, ip_cookie, header. */
  session_affinity?: string | undefined;
  session_affinity_ttl?: number | undefined;
  session_affinity_attributes?:
    | {
        samesite?: string | undefined;
        secure?: string | undefined;
        headers?: string[] | undefined;
        require_all_headers?: boolean | undefined;
      }
    | undefined;
  adaptive_routing?: { failover_across_pools?: boolean | undefined } | undefined;
}

/** What the directory answers for a hostname: `pools` in default_pools order, vanished pools left out. */
export interface DirectoryRoute {
  accountId: string;
  loadBalancer: TrafficLoadBalancer;
  pools: { pool: Pool }[];
  /** The fallback pool, undefined when it no longer exists. */
  fallbackPool: { pool: Pool } | undefined;
}

/**
 * Finds the load balancer serving a hostname (the load balancer store's LoadBalancerDirectory). `onChange`
 * is called after any committed write that can change an answer (a load balancer, pool or monitor
 * created, edited or deleted); the traffic listener then drops its cached routes.
 */
export interface LoadBalancerDirectory {
  findByHostname(hostname: string): Promise<DirectoryRoute | undefined>;
  onChange(listener: () => void): () => void;
}

/** A route as the data plane keeps it in memory. */
export interface ResolvedLoadBalancer {
  accountId: string;
  loadBalancer: TrafficLoadBalancer;
  pools: Pool[];
  fallback: Pool | undefined;
}

export function toResolved(route: DirectoryRoute): ResolvedLoadBalancer {
  return {
    accountId: route.accountId,
    loadBalancer: route.loadBalancer,
    pools: route.pools.map((entry) => entry.pool),
    fallback: route.fallbackPool?.pool,
  };
}
