import type { ApiClient } from './api-client.ts';
import type { Zone } from './wire.ts';

const ZONE_ID = /^[0-9a-f]{32}$/;

/** Every zone the credentials reach (all pages), optionally of one account or with one name. */
export async function listZones(api: ApiClient, filter: { accountId?: string; name?: string } = {}): Promise<Zone[]> {
  const zones: Zone[] = [];
  const query = { 'account.id': filter.accountId, name: filter.name };
  for await (const zone of api.paginate<Zone>('/zones', query, 50)) zones.push(zone);
  return zones;
}

export async function createZone(api: ApiClient, accountId: string, name: string): Promise<Zone> {
  return (await api.request<Zone>('POST', '/zones', { body: { name, account: { id: accountId } } })).result;
}

export async function getZone(api: ApiClient, id: string): Promise<Zone> {
  return (await api.request<Zone>('GET', `/zones/${encodeURIComponent(id)}`)).result;
}

export async function deleteZone(api: ApiClient, id: string): Promise<{ id: string }> {
  return (await api.request<{ id: string }>('DELETE', `/zones/${encodeURIComponent(id)}`)).result;
}

/** A zone by id or by name; undefined when no zone the credentials reach has that name. */
export async function findZone(api: ApiClient, idOrName: string): Promise<Zone | undefined> {
  if (ZONE_ID.test(idOrName)) return getZone(api, idOrName);
  return (await listZones(api, { name: idOrName.toLowerCase().replace(/\.$/, '') }))[0];
}
