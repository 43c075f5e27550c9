import { normaliseHostname, type ZoneRef } from '../zones/index.ts';
import { RouteErrors } from './errors.ts';

/** What routes need of zones: the most specific zone a hostname is in, whoever owns it. */
export interface ZoneLookup {
  owningZone(hostname: string): Promise<ZoneRef | undefined>;
}

/**
 * The account's zone a route or Custom Domain goes in, as wrangler names it: `zone_id`, `zone_name`, or
 * neither (the most specific zone containing `host`). Another account's zone answers as no zone at all.
 */
export async function accountZone(
  zones: ZoneLookup & { byId(id: string): Promise<ZoneRef | undefined> },
  accountId: string,
  named: { zone_id?: string | undefined; zone_name?: string | undefined },
  host: string,
): Promise<ZoneRef> {
  if (named.zone_id !== undefined && named.zone_id !== '') {
    const zone = await zones.byId(named.zone_id);
    if (!zone || zone.accountId !== accountId) throw RouteErrors.zoneNotFound(named.zone_id);
    return zone;
  }
  const name = named.zone_name !== undefined && named.zone_name !== '' ? normaliseHostname(named.zone_name).name : host;
  const zone = await zones.owningZone(name);
  if (!zone || zone.accountId !== accountId || (named.zone_name && zone.name !== name))
    throw RouteErrors.zoneNotFound(named.zone_name || host);
  return zone;
}
