import { canAccessAccount, AuthErrors, type Principal } from '../accounts/index.ts';
import type { PageRequest } from '../api-kit/pagination.ts';
import { newId } from '../shared/ids.ts';
import { ZoneErrors } from './errors.ts';
import { normaliseHostname, ZONE_STATUSES, ZoneCreateSchema, type Zone } from './schemas.ts';
import type { ZoneQuery, ZoneStore } from './store.ts';
import { parseWith } from '../api-kit/body.ts';
import { ZONE_VALIDATION_CODE } from './errors.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';

/** What zones need to know about accounts: their names (rendered in every zone). */
export interface AccountNames {
  getAccount(id: string): Promise<{ id: string; name: string } | undefined>;
}

/** Runs before a zone is deleted (load balancing removes the zone's load balancers). */
export type ZoneDeletionHook = (zone: Zone) => Promise<void> | void;

/** A zone as another subsystem needs it: which account owns it, and its hostname. */
export interface ZoneRef {
  id: string;
  name: string;
  accountId: string;
}

export interface ZoneListFilters {
  name?: string | undefined;
  accountId?: string | undefined;
  accountName?: string | undefined;
  status?: string | undefined;
  order?: string | undefined;
  direction?: string | undefined;
}

/**
 * Zones: hostnames owned by accounts. There is no DNS here, so a zone is active as soon as it exists
 * (no name server delegation to wait for). The caller must be a member of the owning account; a zone
 * of another account answers exactly as one that does not exist.
 */
export class ZoneService {
  readonly #store: ZoneStore;
  readonly #accounts: AccountNames;
  readonly #deletionHooks: ZoneDeletionHook[] = [];

  readonly #clock: Clock;

  constructor(store: ZoneStore, accounts: AccountNames, clock: Clock) {
    this.#clock = clock;
    this.#store = store;
    this.#accounts = accounts;
  }

  beforeDelete(hook: ZoneDeletionHook): void {
    this.#deletionHooks.push(hook);
  }

  async create(principal: Principal, body: unknown): Promise<Zone> {
    const input = parseWith(ZoneCreateSchema, body, ZONE_VALIDATION_CODE);
    // An account the caller is not a member of is refused as /accounts/{id}/... refuses it.
    if (!canAccessAccount(principal, input.account.id)) throw AuthErrors.accountForbidden();
    const { name, problem } = normaliseHostname(input.name);
    if (problem) throw ZoneErrors.invalidName(input.name, problem);
    if (await this.#store.getByName(name)) throw ZoneErrors.duplicateName(name);
    // Names under another account's zone are that account's (its load balancers may already serve them).
    const parent = await this.#store.longestOf(suffixes(name).slice(1));
    if (parent && parent.account_id !== input.account.id)
      throw ZoneErrors.invalidName(name, `it is under the zone ${parent.name} of another account`);
    const now = isoNow(this.#clock);
    const zone: Zone = {
      id: newId(),
      account_id: input.account.id,
      name,
      status: 'active',
      type: input.type,
      created_on: now,
      modified_on: now,
    };
    await this.#store.insert(zone);
    return zone;
  }

  async get(principal: Principal, id: string): Promise<Zone> {
    const zone = await this.#store.get(id);
    if (!zone || !canAccessAccount(principal, zone.account_id)) throw ZoneErrors.notFound();
    return zone;
  }

  /** For routes under /zones/{zone_id}/...: the zone if the caller may use it, else the unknown-zone error. */
  async resolve(principal: Principal, id: string): Promise<ZoneRef> {
    const zone = await this.get(principal, id);
    return { id: zone.id, name: zone.name, accountId: zone.account_id };
  }

  /** A zone by id, whoever owns it (for subsystems that check the account themselves). */
  async byId(id: string): Promise<ZoneRef | undefined> {
    const zone = await this.#store.get(id);
    return zone ? { id: zone.id, name: zone.name, accountId: zone.account_id } : undefined;
  }

  /** The most specific zone a hostname is in (the zone itself or the nearest one above it), whoever owns it. */
  async owningZone(hostname: string): Promise<ZoneRef | undefined> {
    const zone = await this.#store.longestOf(suffixes(hostname));
    return zone ? { id: zone.id, name: zone.name, accountId: zone.account_id } : undefined;
  }

  async list(
    principal: Principal,
    filters: ZoneListFilters,
    page: PageRequest,
  ): Promise<{ zones: Zone[]; total: number }> {
    let accountIds = [...principal.accountIds];
    if (filters.accountId !== undefined && filters.accountId !== '')
      accountIds = accountIds.filter((id) => id === filters.accountId);
    if (filters.accountName !== undefined && filters.accountName !== '') {
      const wanted = filters.accountName.toLowerCase();
      const named = await Promise.all(accountIds.map((id) => this.#accounts.getAccount(id)));
      accountIds = named.filter((a) => a !== undefined && a.name.toLowerCase().includes(wanted)).map((a) => a!.id);
    }
    if (filters.status !== undefined && filters.status !== '' && !ZONE_STATUSES.includes(filters.status as never))
      throw ZoneErrors.validation(`status must be one of ${ZONE_STATUSES.join(', ')}`);
    const direction = filters.direction ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') throw ZoneErrors.validation('direction must be asc or desc');
    const query: ZoneQuery = {
      accountIds,
      name: nameFilter(filters.name),
      status: filters.status || undefined,
      order: orderColumn(filters.order),
      direction,
      offset: page.offset,
      limit: page.limit,
    };
    return this.#store.list(query);
  }

  async delete(principal: Principal, id: string): Promise<{ id: string }> {
    const zone = await this.get(principal, id);
    for (const hook of this.#deletionHooks) await hook(zone);
    await this.#store.delete(zone.id);
    return { id: zone.id };
  }

  /** Cloudflare's Zone object. Fields that describe DNS delegation or billing have fixed values here. */
  async render(zone: Zone) {
    const account = await this.#accounts.getAccount(zone.account_id);
    return {
      id: zone.id,
      name: zone.name,
      status: zone.status,
      paused: false,
      type: zone.type,
      development_mode: 0,
      name_servers: [] as string[],
      original_name_servers: null,
      original_registrar: null,
      original_dnshost: null,
      created_on: zone.created_on,
      modified_on: zone.modified_on,
      activated_on: zone.created_on,
      meta: { step: 4, custom_certificate_quota: 0, page_rule_quota: 0, phishing_detected: false },
      owner: { id: zone.account_id, type: 'organization', name: account?.name ?? '' },
      account: { id: zone.account_id, name: account?.name ?? '' },
      permissions: ['#zone:read', '#zone:edit', '#load_balancer:read', '#load_balancer:edit'],
      plan: {
        id: '0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
        name: 'Free Website',
        price: 0,
        currency: 'USD',
        frequency: '',
        is_subscribed: false,
        can_subscribe: false,
        legacy_id: 'free',
        legacy_discount: false,
        externally_managed: false,
      },
    };
  }
}

/** "a.b.example.com" -> ["a.b.example.com", "b.example.com", "example.com"] (never the bare TLD). */
function suffixes(hostname: string): string[] {
  const labels = hostname.split('.');
  const names: string[] = [];
  for (let i = 0; i < labels.length - 1; i++) names.push(labels.slice(i).join('.'));
  return names;
}

/** `name` as Cloudflare reads it: exact, or `starts_with:` / `ends_with:` / `contains:` a fragment. */
function nameFilter(raw: string | undefined): ZoneQuery['name'] {
  if (raw === undefined || raw === '') return undefined;
  const match = /^(starts_with|ends_with|contains):(.*)$/.exec(raw);
  if (!match) return { exact: raw.toLowerCase() };
  const fragment = (match[2] ?? '').toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  if (match[1] === 'starts_with') return { like: `${fragment}%` };
  if (match[1] === 'ends_with') return { like: `%${fragment}` };
  return { like: `%${fragment}%` };
}

function orderColumn(raw: string | undefined): ZoneQuery['order'] {
  if (raw === undefined || raw === '' || raw === 'name' || raw === 'plan.id') return 'name';
  if (raw === 'status') return 'status';
  if (raw === 'account.id' || raw === 'account.name') return 'account_id';
  throw ZoneErrors.validation('order must be one of name, status, account.id, account.name, plan.id');
}
