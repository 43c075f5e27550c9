import type { ApiClient, ApiResponse } from './api-client.ts';

/** The pool fields the CLI reads; the API returns more (see docs/api.md). */
export interface PoolSummary {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  minimum_origins: number;
  monitor?: string;
  notification_email: string;
  origins: { name: string; address: string; enabled: boolean; weight: number; port?: number }[];
  created_on: string;
  modified_on: string;
  [field: string]: unknown;
}

export interface MonitorSummary {
  id: string;
  type: string;
  description: string;
  method: string;
  path: string;
  interval: number;
  timeout: number;
  retries: number;
  expected_codes: string;
  [field: string]: unknown;
}

export interface PoolHealthView {
  pool_id: string;
  pop_health: Record<
    string,
    {
      healthy: boolean;
      origins: Record<string, { healthy: boolean; rtt?: string; failure_reason: string; response_code?: number }>[];
    }
  >;
}

const base = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/load_balancers`;
const poolPath = (accountId: string, id: string) => `${base(accountId)}/pools/${encodeURIComponent(id)}`;
const monitorPath = (accountId: string, id: string) => `${base(accountId)}/monitors/${encodeURIComponent(id)}`;

/** Every pool of the account (all pages), ordered by name; `monitor` keeps those using that monitor. */
export async function listPools(
  api: ApiClient,
  accountId: string,
  filter: { monitor?: string } = {},
): Promise<PoolSummary[]> {
  const pools: PoolSummary[] = [];
  for await (const pool of api.paginate<PoolSummary>(`${base(accountId)}/pools`, { monitor: filter.monitor }, 1000))
    pools.push(pool);
  return pools;
}

export async function getPool(api: ApiClient, accountId: string, id: string): Promise<PoolSummary> {
  return (await api.request<PoolSummary>('GET', poolPath(accountId, id))).result;
}

export async function createPool(
  api: ApiClient,
  accountId: string,
  body: Record<string, unknown>,
): Promise<PoolSummary> {
  return (await api.request<PoolSummary>('POST', `${base(accountId)}/pools`, { body })).result;
}

/** PATCH: only the given fields change. */
export async function updatePool(
  api: ApiClient,
  accountId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<PoolSummary> {
  return (await api.request<PoolSummary>('PATCH', poolPath(accountId, id), { body })).result;
}

export async function deletePool(api: ApiClient, accountId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', poolPath(accountId, id))).result;
}

export async function getPoolHealth(api: ApiClient, accountId: string, id: string): Promise<PoolHealthView> {
  return (await api.request<PoolHealthView>('GET', `${poolPath(accountId, id)}/health`)).result;
}

/** Bulk PATCH of one page of pools (`{notification_email}` only); returns that page and the server's messages. */
export async function bulkEditPools(
  api: ApiClient,
  accountId: string,
  body: { notification_email: string },
  page: { page?: number; per_page?: number } = {},
): Promise<ApiResponse<PoolSummary[]>> {
  return api.request<PoolSummary[]>('PATCH', `${base(accountId)}/pools`, { body, query: page });
}

export async function listMonitors(api: ApiClient, accountId: string): Promise<MonitorSummary[]> {
  return (await api.request<MonitorSummary[]>('GET', `${base(accountId)}/monitors`)).result;
}

export async function getMonitor(api: ApiClient, accountId: string, id: string): Promise<MonitorSummary> {
  return (await api.request<MonitorSummary>('GET', monitorPath(accountId, id))).result;
}

export async function createMonitor(
  api: ApiClient,
  accountId: string,
  body: Record<string, unknown>,
): Promise<MonitorSummary> {
  return (await api.request<MonitorSummary>('POST', `${base(accountId)}/monitors`, { body })).result;
}

export async function updateMonitor(
  api: ApiClient,
  accountId: string,
  id: string,
  body: Record<string, unknown>,
): Promise<MonitorSummary> {
  return (await api.request<MonitorSummary>('PATCH', monitorPath(accountId, id), { body })).result;
}

export async function deleteMonitor(api: ApiClient, accountId: string, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', monitorPath(accountId, id))).result;
}
