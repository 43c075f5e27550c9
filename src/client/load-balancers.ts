import type { ApiClient, ApiResponse } from './api-client.ts';
import type { LoadBalancer, PoolReference } from './wire.ts';

const base = (zoneId: string) => `/zones/${encodeURIComponent(zoneId)}/load_balancers`;

export async function listLoadBalancers(api: ApiClient, zoneId: string): Promise<LoadBalancer[]> {
  return (await api.request<LoadBalancer[]>('GET', base(zoneId))).result;
}

export async function getLoadBalancer(api: ApiClient, zoneId: string, id: string): Promise<LoadBalancer> {
  return (await api.request<LoadBalancer>('GET', `${base(zoneId)}/${encodeURIComponent(id)}`)).result;
}

/** Answers the whole envelope: `messages` may say a setting is stored but not applied. */
export async function createLoadBalancer(
  api: ApiClient,
  zoneId: string,
  body: Record<string, unknown>,
): Promise<ApiResponse<LoadBalancer>> {
  return api.request<LoadBalancer>('POST', base(zoneId), { body });
}

/** PATCH: only the given fields change. */
export async function updateLoadBalancer(
  api: ApiClient,
  zoneId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<ApiResponse<LoadBalancer>> {
  return api.request<LoadBalancer>('PATCH', `${base(zoneId)}/${encodeURIComponent(id)}`, { body });
}

export async function deleteLoadBalancer(api: ApiClient, zoneId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', `${base(zoneId)}/${encodeURIComponent(id)}`)).result;
}

/** What a pool refers to and what refers to it (its monitor; the load balancers and policies using it). */
export async function getPoolReferences(api: ApiClient, accountId: string, poolId: string): Promise<PoolReference[]> {
  const path = `/accounts/${encodeURIComponent(accountId)}/load_balancers/pools/${encodeURIComponent(poolId)}/references`;
  return (await api.request<PoolReference[]>('GET', path)).result;
}
