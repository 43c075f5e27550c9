import type { ApiClient, ApiResponse } from './api-client.ts';
import type { Monitor, Pool, PoolHealth } from './wire.ts';

/** The pool fields the CLI reads; the API returns more (see docs/api.md). */
const base = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/load_balancers`;
const poolPath = (accountId: string, id: string) => `${base(accountId)}/pools/${encodeURIComponent(id)}`;
const monitorPath = (accountId: string, id: string) => `${base(accountId)}/monitors/${encodeURIComponent(id)}`;

/** Every pool of the account (all pages), ordered by name; `monitor` keeps those using that monitor. */
export async function listPools(api: ApiClient, accountId: string, filter: { monitor?: string } = {}): Promise<Pool[]> {
  const pools: Pool[] = [];
  for await (const pool of api.paginate<Pool>(`${base(accountId)}/pools`, { monitor: filter.monitor }, 1000))
    pools.push(pool);
  return pools;
}

export async function getPool(api: ApiClient, accountId: string, id: string): Promise<Pool> {
  return (await api.request<Pool>('GET', poolPath(accountId, id))).result;
}

export async function createPool(api: ApiClient, accountId: string, body: Record<string, unknown>): Promise<Pool> {
  return (await api.request<Pool>('POST', `${base(accountId)}/pools`, { body })).result;
}

/** PATCH: only the given fields change. */
export async function updatePool(
  api: ApiClient,
  accountId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<Pool> {
  return (await api.request<Pool>('PATCH', poolPath(accountId, id), { body })).result;
}

export async function deletePool(api: ApiClient, accountId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', poolPath(accountId, id))).result;
}

export async function getPoolHealth(api: ApiClient, accountId: string, id: string): Promise<PoolHealth> {
  return (await api.request<PoolHealth>('GET', `${poolPath(accountId, id)}/health`)).result;
}

/** Bulk PATCH of one page of pools (`{notification_email}` only); returns that page and the server's messages. */
export async function bulkEditPools(
  api: ApiClient,
  accountId: string,
  body: { notification_email: string },
  page: { page?: number; per_page?: number } = {},
): Promise<ApiResponse<Pool[]>> {
  return api.request<Pool[]>('PATCH', `${base(accountId)}/pools`, { body, query: page });
}

export async function listMonitors(api: ApiClient, accountId: string): Promise<Monitor[]> {
  return (await api.request<Monitor[]>('GET', `${base(accountId)}/monitors`)).result;
}

export async function getMonitor(api: ApiClient, accountId: string, id: string): Promise<Monitor> {
  return (await api.request<Monitor>('GET', monitorPath(accountId, id))).result;
}

export async function createMonitor(
  api: ApiClient,
  accountId: string,
  body: Record<string, unknown>,
): Promise<Monitor> {
  return (await api.request<Monitor>('POST', `${base(accountId)}/monitors`, { body })).result;
}

export async function updateMonitor(
  api: ApiClient,
  accountId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<Monitor> {
  return (await api.request<Monitor>('PATCH', monitorPath(accountId, id), { body })).result;
}

export async function deleteMonitor(api: ApiClient, accountId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', monitorPath(accountId, id))).result;
}
