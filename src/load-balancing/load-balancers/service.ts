import type { Message } from '../../api-kit/envelope.ts';
import { normaliseHostname } from '../../shared/hostname.ts';
import { clip } from '../../shared/errors.ts';
import { newId } from '../../shared/ids.ts';
import { LbErrors } from '../errors.ts';
import type { PoolStore } from '../pool-store.ts';
import type { Reference } from '../references.ts';
import { validate } from '../validation.ts';
import type { ConfigChangeBus } from './changes.ts';
import {
  APPLIED_STEERING_POLICIES,
  LoadBalancerInputSchema,
  type LoadBalancer,
  type LoadBalancerInput,
} from './schemas.ts';
import type { LoadBalancerStore } from './store.ts';
import { isoNow } from '../../shared/time.ts';
import type { Clock } from '../../shared/clock.ts';

/** The zone a request addresses, already checked against the caller (see ZoneService.resolve). */
export interface LoadBalancerZone {
  id: string;
  name: string;
  accountId: string;
}

/**
 * Hostnames that lead to Ledge itself (its API host, `localhost`, the functions domain and every name under
 * it): a load balancer there would take traffic meant for Ledge, or proxy requests back into it in a loop.
 */
export interface ReservedHostnames {
  /** Refused exactly and with every name under them. */
  domains: readonly string[];
  /** Names served by something else on the traffic port (public buckets' custom domains), checked on each write. */
  servedElsewhere?: ((hostname: string) => boolean) | undefined;
}

/** The most specific zone a hostname falls in, whatever its account (zones subsystem). */
export type HostnameZoneLookup = (hostname: string) => Promise<{ id: string; name: string } | undefined>;

export interface LoadBalancerAnswer {
  loadBalancer: LoadBalancer;
  /** Notices to answer with the load balancer (e.g. a steering policy that is stored but not applied). */
  messages: Message[];
}

/** Zone load balancers: validation, the rules that span records (zone, pools, unique hostnames), persistence. */
export class LoadBalancerService {
  readonly #store: LoadBalancerStore;
  readonly #pools: PoolStore;
  readonly #changes: ConfigChangeBus;
  readonly #reserved: ReservedHostnames;
  readonly #zoneOf: HostnameZoneLookup | undefined;

  readonly #clock: Clock;

  constructor(
    store: LoadBalancerStore,
    pools: PoolStore,
    changes: ConfigChangeBus,
    reserved: ReservedHostnames,
    zoneOf: HostnameZoneLookup | undefined,
    clock: Clock,
  ) {
    this.#clock = clock;
    this.#store = store;
    this.#pools = pools;
    this.#changes = changes;
    this.#zoneOf = zoneOf;
    this.#reserved = {
      domains: reserved.domains.map((d) => d.toLowerCase().replace(/\.$/, '')).filter(Boolean),
      servedElsewhere: reserved.servedElsewhere,
    };
  }

  list(zone: LoadBalancerZone): Promise<LoadBalancer[]> {
    return this.#store.list(zone.id);
  }

  async get(zone: LoadBalancerZone, id: string): Promise<LoadBalancer> {
    const lb = await this.#store.get(zone.id, id);
    if (!lb) throw LbErrors.loadBalancerNotFound(id);
    return lb;
  }

  async create(zone: LoadBalancerZone, body: unknown): Promise<LoadBalancerAnswer> {
    const input = validate(LoadBalancerInputSchema, body ?? {});
    const now = isoNow(this.#clock);
    const lb = await this.#build(zone, input, { id: newId(), created_on: now, modified_on: now });
    await this.#store.insert({ accountId: zone.accountId, zoneId: zone.id }, lb);
    this.#publish(zone, lb.id, [lb.name]);
    return { loadBalancer: lb, messages: notices(lb) };
  }

  /** PUT: the body replaces the load balancer (omitted fields take their defaults). */
  async replace(zone: LoadBalancerZone, id: string, body: unknown): Promise<LoadBalancerAnswer> {
    const existing = await this.get(zone, id);
    return this.#save(zone, existing, validate(LoadBalancerInputSchema, body ?? {}));
  }

  /** PATCH: the body's top-level fields replace the stored ones; the result is validated as a whole. */
  async patch(zone: LoadBalancerZone, id: string, body: unknown): Promise<LoadBalancerAnswer> {
    const existing = await this.get(zone, id);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw LbErrors.validation('body must be a JSON object');
    const { id: _id, created_on: _c, modified_on: _m, zone_name: _z, ...stored } = existing;
    return this.#save(zone, existing, validate(LoadBalancerInputSchema, { ...stored, ...body }));
  }

  async delete(zone: LoadBalancerZone, id: string): Promise<{ id: string }> {
    const lb = await this.get(zone, id);
    await this.#store.delete(zone.id, id);
    this.#publish(zone, id, [lb.name]);
    return { id };
  }

  /** A zone is being deleted: its load balancers go with it (as on Cloudflare). */
  async removeZone(zone: LoadBalancerZone): Promise<void> {
    const hostnames = await this.#store.deleteZone(zone.id);
    if (hostnames.length > 0)
      this.#changes.publish({ kind: 'zone', accountId: zone.accountId, id: zone.id, hostnames });
  }

  /** Load balancers that use a pool, as `/pools/{id}/references` lists them. */
  async referencesTo(accountId: string, poolId: string): Promise<Reference[]> {
    return (await this.#store.listByPool(accountId, poolId)).map((lb) => ({
      reference_type: 'referrer',
      resource_id: lb.id,
      resource_name: lb.name,
      resource_type: 'load_balancer',
    }));
  }

  async #save(zone: LoadBalancerZone, existing: LoadBalancer, input: LoadBalancerInput): Promise<LoadBalancerAnswer> {
    const lb = await this.#build(zone, input, {
      id: existing.id,
      created_on: existing.created_on,
      modified_on: isoNow(this.#clock),
    });
    await this.#store.update(zone.id, lb);
    this.#publish(zone, lb.id, existing.name === lb.name ? [lb.name] : [existing.name, lb.name]);
    return { loadBalancer: lb, messages: notices(lb) };
  }

  async #build(
    zone: LoadBalancerZone,
    input: LoadBalancerInput,
    meta: { id: string; created_on: string; modified_on: string },
  ): Promise<LoadBalancer> {
    const name = this.#checkHostname(zone, input.name);
    // A hostname under a more specific zone belongs to that zone (possibly another account's).
    const owner = await this.#zoneOf?.(name);
    if (owner && owner.id !== zone.id)
      throw LbErrors.validation(`name: ${name} is in the zone ${owner.name}; create the load balancer there`);
    if (await this.#store.nameTaken(name, meta.id)) throw LbErrors.duplicateLoadBalancerName(name);
    await this.#checkPools(zone.accountId, input);
    const { id: _id, created_on: _c, modified_on: _m, zone_name: _z, ...fields } = input;
    return { ...meta, zone_name: zone.name, ...fields, name };
  }

  #checkHostname(zone: LoadBalancerZone, raw: string): string {
    const { name, problem } = normaliseHostname(raw);
    if (problem) throw LbErrors.validation(`name: "${clip(raw)}" is not a valid hostname: ${problem}`);
    if (name !== zone.name && !name.endsWith(`.${zone.name}`))
      throw LbErrors.validation(`name: ${name} is not in the zone ${zone.name}`);
    const reserved = this.#reserved.domains.find((domain) => name === domain || name.endsWith(`.${domain}`));
    if (reserved !== undefined)
      throw LbErrors.validation(
        `name: ${name} is one of Ledge's own hostnames (${reserved}); a load balancer there would route requests back into Ledge`,
      );
    if (this.#reserved.servedElsewhere?.(name))
      throw LbErrors.validation(`name: ${name} serves a public R2 bucket (a custom domain) on the traffic port`);
    return name;
  }

  /** Every pool the body names must be a pool of the zone's account (a pool of another account is unknown). */
  async #checkPools(accountId: string, input: LoadBalancerInput): Promise<void> {
    const named: [string, string][] = input.default_pools.map((id, index) => [`default_pools.${index}`, id]);
    named.push(['fallback_pool', input.fallback_pool]);
    for (const field of ['region_pools', 'pop_pools', 'country_pools'] as const)
      for (const [key, ids] of Object.entries(input[field] ?? {}))
        ids.forEach((id, index) => named.push([`${field}.${key}.${index}`, id]));
    const known = new Map<string, boolean>();
    for (const [path, id] of named) {
      if (!known.has(id)) known.set(id, (await this.#pools.get(accountId, id)) !== undefined);
      if (!known.get(id)) throw LbErrors.validation(`${path}: no pool with id "${id}" in this account`);
    }
  }

  #publish(zone: LoadBalancerZone, id: string, hostnames: string[]): void {
    this.#changes.publish({ kind: 'load_balancer', accountId: zone.accountId, id, hostnames });
  }
}

/** Steering policies the traffic listener does not implement are kept, and said so in `messages`. */
function notices(lb: LoadBalancer): Message[] {
  if (APPLIED_STEERING_POLICIES.includes(lb.steering_policy)) return [];
  return [
    {
      code: 1000,
      message: `steering_policy "${lb.steering_policy}" is stored but not applied by Ledge: requests for this hostname are answered 501 (error code 1002, naming the policy) until it is implemented`,
    },
  ];
}
