import type { PageRequest } from '../api-kit/pagination.ts';
import type { Message } from '../api-kit/envelope.ts';
import type { EgressPolicy } from '../egress/index.ts';
import { newId } from '../shared/ids.ts';
import { assertOriginsReachable } from './egress-check.ts';
import { LbErrors } from './errors.ts';
import type { MonitorStore } from './monitor-store.ts';
import { BulkPatchSchema, PoolInputSchema, type Origin, type Pool, type PoolInput } from './pool-schemas.ts';
import type { PoolEnablementBus } from './pool-events.ts';
import type { PoolPage, PoolStore } from './pool-store.ts';
import type { Reference, ReferenceSource } from './references.ts';
import { normaliseEmailList, validate } from './validation.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';

/** Told about every pool change so the health checker re-plans that pool. */
export type PoolChangeListener = (accountId: string, poolId: string) => Promise<void> | void;

export const LEGACY_EMAIL_NOTICE: Message = {
  code: 1000,
  message:
    'notification_email is deprecated: create a load_balancing_health_alert notification policy instead (alerting/v3), then clear notification_email with ""',
};

/** Pools: validation, the rules that span records (unique names, existing monitors, references), persistence. */
export class PoolService {
  readonly #pools: PoolStore;
  readonly #monitors: MonitorStore;
  readonly #listeners: PoolChangeListener[] = [];
  readonly #referenceSources: ReferenceSource[] = [];
  readonly #enablement: PoolEnablementBus | undefined;
  readonly #egress: EgressPolicy;

  readonly #clock: Clock;

  constructor(
    pools: PoolStore,
    monitors: MonitorStore,
    egress: EgressPolicy,
    enablement: PoolEnablementBus | undefined,
    clock: Clock,
  ) {
    this.#clock = clock;
    this.#pools = pools;
    this.#monitors = monitors;
    this.#egress = egress;
    this.#enablement = enablement;
  }

  onChange(listener: PoolChangeListener): void {
    this.#listeners.push(listener);
  }

  /** Other subsystems that may refer to pools (load balancers, alert policies) report their references here. */
  addReferenceSource(source: ReferenceSource): void {
    this.#referenceSources.push(source);
  }

  list(accountId: string, page: PageRequest, monitorId?: string): Promise<PoolPage> {
    return this.#pools.list(accountId, { monitorId, offset: page.offset, limit: page.limit });
  }

  async get(accountId: string, id: string): Promise<Pool> {
    const pool = await this.#pools.get(accountId, id);
    if (!pool) throw LbErrors.poolNotFound(id);
    return pool;
  }

  async poolExists(accountId: string, id: string): Promise<boolean> {
    return (await this.#pools.get(accountId, id)) !== undefined;
  }

  countPoolsWithLegacyEmail(accountId: string): Promise<number> {
    return this.#pools.countWithLegacyEmail(accountId);
  }

  async create(accountId: string, body: unknown): Promise<Pool> {
    const input = validate(PoolInputSchema, body);
    await this.#checkRules(accountId, input);
    const now = isoNow(this.#clock);
    const pool = toPool(input, { id: newId(), created_on: now, modified_on: now });
    await this.#pools.insert(accountId, pool);
    await this.#changed(accountId, pool.id);
    return pool;
  }

  /** PUT: the body replaces the pool (omitted fields take their defaults). */
  async replace(accountId: string, id: string, body: unknown): Promise<Pool> {
    const existing = await this.get(accountId, id);
    return this.#save(accountId, existing, validate(PoolInputSchema, body));
  }

  /** PATCH: the body's top-level fields replace the stored ones; the result is validated as a whole. */
  async patch(accountId: string, id: string, body: unknown): Promise<Pool> {
    const existing = await this.get(accountId, id);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw LbErrors.validation('body must be a JSON object');
    const { id: _id, created_on: _c, modified_on: _m, disabled_at: _d, ...stored } = existing;
    return this.#save(accountId, existing, validate(PoolInputSchema, { ...stored, ...body }));
  }

  /**
   * Bulk PATCH: the body is applied to the pools of the requested page only (same order and paging as
   * the list). Only `notification_email` may be set; a non-empty list is applied with a deprecation notice.
   */
  async bulkPatch(accountId: string, page: PageRequest, body: unknown): Promise<PoolPage & { messages: Message[] }> {
    const { notification_email: raw } = validate(BulkPatchSchema, body);
    const email = raw === '' ? '' : normaliseEmailList(raw);
    const now = isoNow(this.#clock);
    const result = await this.#pools.updatePage(accountId, { offset: page.offset, limit: page.limit }, (pool) =>
      pool.notification_email === email ? pool : { ...pool, notification_email: email, modified_on: now },
    );
    for (const pool of result.pools) await this.#changed(accountId, pool.id);
    return { ...result, messages: email === '' ? [] : [LEGACY_EMAIL_NOTICE] };
  }

  async delete(accountId: string, id: string): Promise<{ id: string }> {
    const pool = await this.get(accountId, id);
    const referrers = (await this.references(accountId, id)).filter((r) => r.reference_type === 'referrer');
    if (referrers.length > 0) {
      throw LbErrors.stillReferenced(
        `Pool ${pool.name}`,
        referrers.map((r) => `${r.resource_type} ${r.resource_name || r.resource_id}`).join(', '),
      );
    }
    await this.#pools.delete(accountId, id);
    await this.#changed(accountId, id);
    return { id };
  }

  /** What the pool refers to (its monitor) and what refers to it (reported by reference sources). */
  async references(accountId: string, id: string): Promise<Reference[]> {
    const pool = await this.get(accountId, id);
    const references: Reference[] = [];
    if (pool.monitor) {
      references.push({
        reference_type: 'referral',
        resource_id: pool.monitor,
        resource_name: pool.monitor,
        resource_type: 'monitor',
      });
    }
    for (const source of this.#referenceSources) references.push(...(await source(accountId, id)));
    return references;
  }

  async #save(accountId: string, existing: Pool, input: PoolInput): Promise<Pool> {
    await this.#checkRules(accountId, input, existing.id);
    const pool = toPool(
      input,
      { id: existing.id, created_on: existing.created_on, modified_on: isoNow(this.#clock) },
      existing,
    );
    await this.#pools.update(accountId, pool, async (previous, scope) => {
      if (!previous || previous.enabled === pool.enabled) return;
      const event = {
        occurredAt: pool.modified_on,
        accountId,
        poolId: pool.id,
        poolName: pool.name,
        enabled: pool.enabled,
      };
      await this.#enablement?.publish(event, scope);
    });
    await this.#changed(accountId, pool.id);
    return pool;
  }

  async #checkRules(accountId: string, input: PoolInput, exceptId?: string): Promise<void> {
    const monitor = input.monitor ? await this.#monitors.get(accountId, input.monitor) : undefined;
    if (input.monitor && !monitor) {
      throw LbErrors.validation(`monitor: no monitor with id "${input.monitor}" in this account`);
    }
    if (await this.#pools.nameTaken(accountId, input.name, exceptId)) throw LbErrors.duplicatePoolName(input.name);
    await assertOriginsReachable(this.#egress, input.origins, monitor);
  }

  async #changed(accountId: string, poolId: string): Promise<void> {
    for (const listener of this.#listeners) await listener(accountId, poolId);
  }
}

/** Builds the stored pool; `disabled_at` records when a pool or origin was switched off and is kept while it stays off. */
function toPool(
  input: PoolInput,
  meta: { id: string; created_on: string; modified_on: string },
  previous?: Pool,
): Pool {
  const { id: _id, created_on: _c, modified_on: _m, disabled_at: _d, monitor, origins, ...fields } = input;
  const pool: Pool = { ...meta, ...fields, origins: origins.map((o) => toOrigin(o, previous, meta.modified_on)) };
  if (pool.notification_email !== '') pool.notification_email = normaliseEmailList(pool.notification_email);
  if (monitor) pool.monitor = monitor;
  if (!input.enabled)
    pool.disabled_at = previous?.enabled === false ? (previous.disabled_at ?? meta.modified_on) : meta.modified_on;
  return pool;
}

function toOrigin(input: PoolInput['origins'][number], previous: Pool | undefined, now: string): Origin {
  const { disabled_at: _d, ...fields } = input;
  const origin: Origin = { ...fields };
  if (!input.enabled) {
    const before = previous?.origins.find((o) => o.name === input.name);
    origin.disabled_at = before?.enabled === false ? (before.disabled_at ?? now) : now;
  }
  return origin;
}
