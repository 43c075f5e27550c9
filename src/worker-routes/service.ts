import type { Principal } from '../accounts/index.ts';
import { parseWith } from '../api-kit/body.ts';
import type { SqlExecutor } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import { newId } from '../shared/ids.ts';
import { isoNow } from '../shared/time.ts';
import type { ZoneRef } from '../zones/index.ts';
import { RouteErrors, ROUTE_VALIDATION_CODE } from './errors.ts';
import { parseRoutePattern, withinZone } from './pattern.ts';
import { RouteBodySchema, ScriptRoutesSchema } from './schemas.ts';
import type { RouteRecord, SqlWorkerRouteStore } from './store.ts';
import { accountZone, type ZoneLookup } from './zone-of.ts';

/** What routes need from the rest of the platform (injected, so this folder imports neither side). */
export interface WorkerRouteDeps {
  store: SqlWorkerRouteStore;
  zones: ZoneLookup & {
    byId(id: string): Promise<ZoneRef | undefined>;
    /** The zone under /zones/{zone_id}/... if the caller may use it, else the unknown-zone error. */
    resolve(principal: Principal, zoneId: string): Promise<ZoneRef>;
  };
  /** Whether the account has a script of this name. */
  scriptExists(accountId: string, name: string): Promise<boolean>;
  /** After a committed change: the traffic port's table and the runtime (which loads routed scripts). */
  changed(): Promise<void>;
  clock: Clock;
}

/** The SDK's Route: `{ id, pattern, script }`. */
export function renderRoute(route: RouteRecord) {
  return route.script === null
    ? { id: route.id, pattern: route.pattern }
    : { id: route.id, pattern: route.pattern, script: route.script };
}

/**
 * Workers routes: a URL pattern in one of the account's zones, to one of its scripts. The zone routes are
 * the SDK's (`/zones/{zone_id}/workers/routes`); the script's list is what `wrangler deploy` replaces.
 */
export class WorkerRouteService {
  readonly #deps: WorkerRouteDeps;
  readonly #clock: Clock;

  constructor(deps: WorkerRouteDeps) {
    this.#deps = deps;
    this.#clock = deps.clock;
  }

  async list(principal: Principal, zoneId: string): Promise<RouteRecord[]> {
    const zone = await this.#deps.zones.resolve(principal, zoneId);
    return this.#deps.store.zoneRoutes(zone.id);
  }

  async get(principal: Principal, zoneId: string, id: string): Promise<RouteRecord> {
    const zone = await this.#deps.zones.resolve(principal, zoneId);
    const route = await this.#deps.store.getRoute(zone.id, id);
    if (!route) throw RouteErrors.routeNotFound();
    return route;
  }

  async create(principal: Principal, zoneId: string, body: unknown): Promise<RouteRecord> {
    const zone = await this.#deps.zones.resolve(principal, zoneId);
    const input = parseWith(RouteBodySchema, body, ROUTE_VALIDATION_CODE);
    const pattern = checkedPattern(input.pattern, zone);
    const script = await this.#script(zone.accountId, input.script);
    const route: RouteRecord = {
      id: newId(),
      account_id: zone.accountId,
      zone_id: zone.id,
      pattern,
      script,
      created_on: isoNow(this.#clock),
    };
    await this.#deps.store.transaction(async (tx) => {
      if (await this.#deps.store.routeByPattern(zone.id, pattern, tx)) throw RouteErrors.duplicatePattern(pattern);
      await this.#deps.store.insertRoute(route, tx);
    });
    await this.#deps.changed();
    return route;
  }

  async update(principal: Principal, zoneId: string, id: string, body: unknown): Promise<RouteRecord> {
    const zone = await this.#deps.zones.resolve(principal, zoneId);
    const input = parseWith(RouteBodySchema, body, ROUTE_VALIDATION_CODE);
    const pattern = checkedPattern(input.pattern, zone);
    const script = await this.#script(zone.accountId, input.script);
    const updated = await this.#deps.store.transaction(async (tx) => {
      const route = await this.#deps.store.getRoute(zone.id, id, tx);
      if (!route) throw RouteErrors.routeNotFound();
      const other = await this.#deps.store.routeByPattern(zone.id, pattern, tx);
      if (other && other.id !== id) throw RouteErrors.duplicatePattern(pattern);
      const next = { ...route, pattern, script };
      await this.#deps.store.updateRoute(next, tx);
      return next;
    });
    await this.#deps.changed();
    return updated;
  }

  async delete(principal: Principal, zoneId: string, id: string): Promise<{ id: string }> {
    const zone = await this.#deps.zones.resolve(principal, zoneId);
    const route = await this.#deps.store.getRoute(zone.id, id);
    if (!route || !(await this.#deps.store.deleteRoute(route.id))) throw RouteErrors.routeNotFound();
    await this.#deps.changed();
    return { id: route.id };
  }

  scriptRoutes(accountId: string, script: string): Promise<RouteRecord[]> {
    return this.#deps.store.scriptRoutes(accountId, script);
  }

  /**
   * `wrangler deploy`'s PUT of a script's routes: the script's routes become exactly these (the others it had
   * are removed). Each goes in the zone named by `zone_id` or `zone_name`, else the account's zone that
   * contains its host; a pattern another script holds is refused.
   */
  async replaceScriptRoutes(accountId: string, script: string, body: unknown) {
    const input = parseWith(ScriptRoutesSchema, body, ROUTE_VALIDATION_CODE);
    if (!(await this.#deps.scriptExists(accountId, script))) throw RouteErrors.scriptMissing();
    const wanted: { zone: ZoneRef; pattern: string; named: (typeof input)[number] }[] = [];
    for (const entry of input) {
      const parsed = parseRoutePattern(entry.pattern);
      if ('problem' in parsed) throw RouteErrors.invalidPattern(entry.pattern, parsed.problem);
      const zone = await accountZone(this.#deps.zones, accountId, entry, parsed.host);
      wanted.push({ zone, pattern: checkedPattern(entry.pattern, zone), named: entry });
    }
    const now = isoNow(this.#clock);
    const result = await this.#deps.store.transaction(async (tx: SqlExecutor) => {
      const previous = await this.#deps.store.scriptRoutes(accountId, script, tx);
      const kept = new Set<string>();
      const out = [];
      for (const { zone, pattern, named } of wanted) {
        let route = await this.#deps.store.routeByPattern(zone.id, pattern, tx);
        if (route && route.script !== script) throw RouteErrors.duplicatePattern(pattern);
        if (!route) {
          route = { id: newId(), account_id: accountId, zone_id: zone.id, pattern, script, created_on: now };
          await this.#deps.store.insertRoute(route, tx);
        }
        kept.add(route.id);
        out.push({
          id: route.id,
          script,
          pattern,
          ...(named.zone_name !== undefined ? { zone_name: named.zone_name } : {}),
          ...(named.zone_id !== undefined ? { zone_id: named.zone_id } : {}),
        });
      }
      for (const route of previous) if (!kept.has(route.id)) await this.#deps.store.deleteRoute(route.id, tx);
      return out;
    });
    await this.#deps.changed();
    return result;
  }

  async #script(accountId: string, script: string | null | undefined): Promise<string | null> {
    if (script === undefined || script === null || script === '') return null;
    if (!(await this.#deps.scriptExists(accountId, script))) throw RouteErrors.scriptNotFound();
    return script;
  }
}

/** The pattern as stored, or Cloudflare's refusal: invalid (10022), or its host outside the zone (10022). */
function checkedPattern(raw: string, zone: ZoneRef): string {
  const parsed = parseRoutePattern(raw);
  if ('problem' in parsed) throw RouteErrors.invalidPattern(raw, parsed.problem);
  if (!withinZone(parsed, zone.name)) throw RouteErrors.outsideZone(raw);
  return parsed.text;
}
