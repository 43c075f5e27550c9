import { parseWith } from '../api-kit/body.ts';
import type { SqlExecutor } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import { newId } from '../shared/ids.ts';
import { isoNow } from '../shared/time.ts';
import { normaliseHostname, type ZoneRef } from '../zones/index.ts';
import { RouteErrors, ROUTE_VALIDATION_CODE } from './errors.ts';
import { ChangesetSchema, DomainBodySchema, DomainRecordsSchema, type DomainOrigin } from './schemas.ts';
import type { WorkerRouteDeps } from './service.ts';
import type { DomainRecord } from './store.ts';
import { accountZone } from './zone-of.ts';

/** Environments were retired by Cloudflare; the field stays in the SDK's Domain with this value. */
const ENVIRONMENT = 'production';

export interface DomainDeps extends Omit<WorkerRouteDeps, 'zones'> {
  zones: WorkerRouteDeps['zones'];
  /** What else the traffic port serves on `hostname` (a load balancer, a public bucket), in words, if anything. */
  hostnameUse(hostname: string): Promise<string | undefined>;
}

export interface DomainFilters {
  hostname?: string | undefined;
  service?: string | undefined;
  zone_id?: string | undefined;
  zone_name?: string | undefined;
  environment?: string | undefined;
}

/**
 * Custom Domains: every path of a hostname in one of the account's zones goes to one of its scripts (the
 * Worker is the origin). The SDK's `/accounts/{a}/workers/domains`, and the changeset and records calls
 * `wrangler deploy` makes for `custom_domain = true`.
 */
export class WorkerDomainService {
  readonly #deps: DomainDeps;
  readonly #clock: Clock;

  constructor(deps: DomainDeps) {
    this.#deps = deps;
    this.#clock = deps.clock;
  }

  /** The SDK's Domain. There is no DNS here and certificates are the TLS listener's: `cert_id` is empty. */
  async render(domain: DomainRecord) {
    const zone = await this.#deps.zones.byId(domain.zone_id);
    return {
      id: domain.id,
      zone_id: domain.zone_id,
      zone_name: zone?.name ?? '',
      hostname: domain.hostname,
      service: domain.service,
      environment: domain.environment,
      cert_id: '',
    };
  }

  async list(accountId: string, filters: DomainFilters): Promise<DomainRecord[]> {
    const all = await this.#deps.store.accountDomains(accountId);
    const zoneNames = new Map<string, string>();
    for (const d of all) zoneNames.set(d.zone_id, (await this.#deps.zones.byId(d.zone_id))?.name ?? '');
    return all.filter(
      (d) =>
        (!filters.hostname || d.hostname === filters.hostname.toLowerCase()) &&
        (!filters.service || d.service === filters.service) &&
        (!filters.zone_id || d.zone_id === filters.zone_id) &&
        (!filters.zone_name || zoneNames.get(d.zone_id) === filters.zone_name.toLowerCase()) &&
        (!filters.environment || d.environment === filters.environment),
    );
  }

  async get(accountId: string, id: string): Promise<DomainRecord> {
    const domain = await this.#deps.store.getDomain(accountId, id);
    if (!domain) throw RouteErrors.domainNotFound();
    return domain;
  }

  /** PUT /workers/domains: attaches `hostname` to `service`, moving it from another of the account's scripts. */
  async attach(accountId: string, body: unknown): Promise<DomainRecord> {
    const input = parseWith(DomainBodySchema, body, ROUTE_VALIDATION_CODE);
    if (!(await this.#deps.scriptExists(accountId, input.service))) throw RouteErrors.scriptNotFound();
    const target = await this.#target(accountId, input);
    const domain = await this.#deps.store.transaction((tx) =>
      this.#put(accountId, target, input.service, input.environment ?? ENVIRONMENT, true, tx),
    );
    await this.#deps.changed();
    return domain;
  }

  async detach(accountId: string, id: string): Promise<void> {
    const domain = await this.get(accountId, id);
    await this.#deps.store.deleteDomain(domain.id);
    await this.#deps.changed();
  }

  /** What `records` would do with these origins, as wrangler's changeset call reads it. */
  async changeset(accountId: string, script: string, body: unknown, replaceState: boolean) {
    const origins = parseWith(ChangesetSchema, body, ROUTE_VALIDATION_CODE);
    if (!(await this.#deps.scriptExists(accountId, script))) throw RouteErrors.scriptMissing();
    const added = [];
    const updated = [];
    const conflicting = [];
    const listed = new Set<string>();
    for (const origin of origins) {
      const target = await this.#target(accountId, origin);
      listed.add(target.hostname);
      const existing = await this.#deps.store.domainByHostname(target.hostname);
      const shape = { hostname: target.hostname, zone_id: target.zone.id, zone_name: target.zone.name };
      if (existing) {
        updated.push({ ...(await this.render(existing)), modified: existing.service !== script });
      } else if (await this.#deps.hostnameUse(target.hostname)) {
        conflicting.push(shape);
      } else added.push({ ...shape, service: script, environment: ENVIRONMENT });
    }
    const removed = replaceState
      ? await Promise.all(
          (await this.#deps.store.accountDomains(accountId))
            .filter((d) => d.service === script && !listed.has(d.hostname))
            .map((d) => this.render(d)),
        )
      : [];
    return { added, removed, updated, conflicting };
  }

  /**
   * `wrangler deploy`'s PUT of a script's Custom Domains: each origin attached to the script (one of another
   * script moves only with `override_existing_origin`), and with `override_scope` the script's other
   * domains detached. A hostname a load balancer or public bucket serves is refused either way: Ledge
   * will not remove them for a Custom Domain as Cloudflare replaces a DNS record.
   */
  async replaceScriptDomains(accountId: string, script: string, body: unknown) {
    const input = parseWith(DomainRecordsSchema, body, ROUTE_VALIDATION_CODE);
    if (!(await this.#deps.scriptExists(accountId, script))) throw RouteErrors.scriptMissing();
    const targets: { hostname: string; zone: ZoneRef }[] = [];
    for (const origin of input.origins) targets.push(await this.#target(accountId, origin));
    const domains = await this.#deps.store.transaction(async (tx) => {
      const out: DomainRecord[] = [];
      for (const target of targets)
        out.push(await this.#put(accountId, target, script, ENVIRONMENT, input.override_existing_origin === true, tx));
      if (input.override_scope) {
        const keep = new Set(out.map((d) => d.id));
        for (const d of await this.#deps.store.accountDomains(accountId, tx))
          if (d.service === script && !keep.has(d.id)) await this.#deps.store.deleteDomain(d.id, tx);
      }
      return out;
    });
    await this.#deps.changed();
    return Promise.all(domains.map((d) => this.render(d)));
  }

  async #target(
    accountId: string,
    origin: Pick<DomainOrigin, 'hostname' | 'zone_id' | 'zone_name'>,
  ): Promise<{ hostname: string; zone: ZoneRef }> {
    const { name: hostname, problem } = normaliseHostname(origin.hostname);
    if (problem !== undefined) throw RouteErrors.invalidHostname(origin.hostname, problem);
    const zone = await accountZone(this.#deps.zones, accountId, origin, hostname);
    if (hostname !== zone.name && !hostname.endsWith(`.${zone.name}`))
      throw RouteErrors.hostnameOutsideZone(hostname, zone.name);
    return { hostname, zone };
  }

  async #put(
    accountId: string,
    target: { hostname: string; zone: ZoneRef },
    service: string,
    environment: string,
    moveFromOther: boolean,
    tx: SqlExecutor,
  ): Promise<DomainRecord> {
    const existing = await this.#deps.store.domainByHostname(target.hostname, tx);
    if (existing) {
      // Another account's domain is refused as one of its zones would be: it is not there for this caller.
      if (existing.account_id !== accountId) throw RouteErrors.hostnameTaken(target.hostname, 'another account');
      if (existing.service !== service && !moveFromOther)
        throw RouteErrors.hostnameTaken(target.hostname, `the Worker ${existing.service}`);
      await this.#deps.store.repointDomain(existing.id, service, environment, tx);
      return { ...existing, service, environment };
    }
    const use = await this.#deps.hostnameUse(target.hostname);
    if (use) throw RouteErrors.hostnameTaken(target.hostname, use);
    const domain: DomainRecord = {
      id: newId(),
      account_id: accountId,
      zone_id: target.zone.id,
      hostname: target.hostname,
      service,
      environment,
      created_on: isoNow(this.#clock),
    };
    await this.#deps.store.insertDomain(domain, tx);
    return domain;
  }
}
