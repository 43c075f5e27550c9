import type { RouteListResponse } from 'cloudflare/resources/workers/routes';
import type { DomainListResponse } from 'cloudflare/resources/workers/domains';
import type { ApiClient } from './api-client.ts';

export type WorkerRoute = RouteListResponse;
export type WorkerDomain = DomainListResponse;

/** A zone's Workers routes (`/zones/{zone_id}/workers/routes`). */
export async function listZoneRoutes(api: ApiClient, zoneId: string): Promise<WorkerRoute[]> {
  return (await api.request<WorkerRoute[]>('GET', `/zones/${encodeURIComponent(zoneId)}/workers/routes`)).result;
}

/** The account's Custom Domains (`/accounts/{a}/workers/domains`), optionally of one script. */
export async function listWorkerDomains(api: ApiClient, accountId: string, service?: string): Promise<WorkerDomain[]> {
  const query = service ? `?service=${encodeURIComponent(service)}` : '';
  return (await api.request<WorkerDomain[]>('GET', `/accounts/${accountId}/workers/domains${query}`)).result;
}
