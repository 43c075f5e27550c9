import type { ApiClient, ApiResponse } from './api-client.ts';

/** The load balancer fields the CLI reads; the API returns the SDK's whole LoadBalancer. */
export interface LoadBalancerSummary {
  id: string;
  name: string;
  zone_name: string;
  description: string;
  enabled: boolean;
  proxied: boolean;
  ttl: number;
  default_pools: string[];
  fallback_pool: string;
  steering_policy: string;
  session_affinity: string;
  session_affinity_ttl?: number;
  created_on: string;
  modified_on: string;
  [field: string]: unknown;
}

export interface PoolReference {
  reference_type: 'referral' | 'referrer';
  resource_id: string;
  resource_name: string;
  resource_type: string;
}

const base = (zoneId: string) => `/zones/${encodeURIComponent(zoneId)}/load_balancers`;

export async function listLoadBalancers(api: ApiClient, zoneId: string): Promise<LoadBalancerSummary[]> {
  return (await api.request<LoadBalancerSummary[]>('GET', base(zoneId))).result;
}

export async function getLoadBalancer(api: ApiClient, zoneId: string, id: string): Promise<LoadBalancerSummary> {
  return (await api.request<LoadBalancerSummary>('GET', `${base(zoneId)}/${encodeURIComponent(id)}`)).result;
}

/** Answers the whole envelope: `messages` may say a setting is stored but not applied. */
export async function createLoadBalancer(
  api: ApiClient,
  zoneId: string,
  body: Record<string, unknown>,
): Promise<ApiResponse<LoadBalancerSummary>> {
  return api.request<LoadBalancerSummary>('POST', base(zoneId), { body });
}

/** PATCH: only the given fields change. */
export async function updateLoadBalancer(
  api: ApiClient,
  zoneId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<ApiResponse<LoadBalancerSummary>> {
  return api.request<LoadBalancerSummary>('PATCH', `${base(zoneId)}/${encodeURIComponent(id)}`, { body });
}

export async function deleteLoadBalancer(api: ApiClient, zoneId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', `${base(zoneId)}/${encodeURIComponent(id)}`)).result;
}

/** What a pool refers to and what refers to it (its monitor; the load balancers and policies using it). */
export async function getPoolReferences(api: ApiClient, accountId: string, poolId: string): Promise<PoolReference[]> {
  const path = `/accounts/${encodeURIComponent(accountId)}/load_balancers/pools/${encodeURIComponent(poolId)}/references`;
  return (await api.request<PoolReference[]>('GET', path)).result;
}
