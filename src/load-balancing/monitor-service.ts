import type { EgressPolicy } from '../egress/index.ts';
import { newId } from '../shared/ids.ts';
import { assertOriginsReachable } from './egress-check.ts';
import { LbErrors } from './errors.ts';
import { monitorInputSchema, toMonitor, type Monitor, type MonitorInput } from './monitor-schemas.ts';
import type { MonitorStore } from './monitor-store.ts';
import type { PoolStore } from './pool-store.ts';
import type { Reference } from './references.ts';
import { validate } from './validation.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';

export type MonitorChangeListener = (accountId: string, monitorId: string) => Promise<void> | void;

export interface MonitorSettings {
  /** Smallest accepted `interval`, seconds (LEDGE_LB_MIN_INTERVAL; default 5). */
  minIntervalSeconds: number;
}

/** Monitors: validation with type-dependent defaults, references from pools, persistence. */
export class MonitorService {
  readonly #monitors: MonitorStore;
  readonly #pools: PoolStore;
  readonly #schema: ReturnType<typeof monitorInputSchema>;
  readonly #listeners: MonitorChangeListener[] = [];
  readonly #egress: EgressPolicy;

  readonly #clock: Clock;

  constructor(monitors: MonitorStore, pools: PoolStore, settings: MonitorSettings, egress: EgressPolicy, clock: Clock) {
    this.#clock = clock;
    this.#monitors = monitors;
    this.#pools = pools;
    this.#egress = egress;
    this.#schema = monitorInputSchema(settings.minIntervalSeconds);
  }

  onChange(listener: MonitorChangeListener): void {
    this.#listeners.push(listener);
  }

  /** Validates a monitor body without storing it (previews). */
  parse(body: unknown): Monitor {
    const now = isoNow(this.#clock);
    return toMonitor(validate(this.#schema, body ?? {}), { id: '', created_on: now, modified_on: now });
  }

  list(accountId: string): Promise<Monitor[]> {
    return this.#monitors.list(accountId);
  }

  async get(accountId: string, id: string): Promise<Monitor> {
    const monitor = await this.#monitors.get(accountId, id);
    if (!monitor) throw LbErrors.monitorNotFound(id);
    return monitor;
  }

  async create(accountId: string, body: unknown): Promise<Monitor> {
    const input = validate(this.#schema, body ?? {});
    const now = isoNow(this.#clock);
    const monitor = toMonitor(input, { id: newId(), created_on: now, modified_on: now });
    await this.#monitors.insert(accountId, monitor);
    return monitor;
  }

  async replace(accountId: string, id: string, body: unknown): Promise<Monitor> {
    const existing = await this.get(accountId, id);
    return this.#save(accountId, existing, validate(this.#schema, body ?? {}));
  }

  async patch(accountId: string, id: string, body: unknown): Promise<Monitor> {
    const existing = await this.get(accountId, id);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw LbErrors.validation('body must be a JSON object');
    const { id: _id, created_on: _c, modified_on: _m, ...stored } = existing;
    const base: Record<string, unknown> = { ...stored };
    // Type-dependent fields of the old type would not fit a new type: let the new type's defaults apply.
    const patchType = (body as { type?: unknown }).type;
    if (patchType !== undefined && patchType !== existing.type) {
      for (const field of ['method', 'path', 'expected_codes']) delete base[field];
    }
    return this.#save(accountId, existing, validate(this.#schema, { ...base, ...body }));
  }

  async delete(accountId: string, id: string): Promise<{ id: string }> {
    await this.get(accountId, id);
    const users = await this.#pools.listByMonitor(accountId, id);
    if (users.length > 0)
      throw LbErrors.stillReferenced(`Monitor ${id}`, users.map((p) => `pool ${p.name}`).join(', '));
    await this.#monitors.delete(accountId, id);
    return { id };
  }

  /** Pools that use the monitor. */
  async references(accountId: string, id: string): Promise<Reference[]> {
    await this.get(accountId, id);
    return (await this.#pools.listByMonitor(accountId, id)).map((pool) => ({
      reference_type: 'referrer',
      resource_id: pool.id,
      resource_name: pool.name,
      resource_type: 'pool',
    }));
  }

  async #save(accountId: string, existing: Monitor, input: MonitorInput): Promise<Monitor> {
    const monitor = toMonitor(input, {
      id: existing.id,
      created_on: existing.created_on,
      modified_on: isoNow(this.#clock),
    });
    // The new port or type changes where the pools using the monitor are probed.
    for (const pool of await this.#pools.listByMonitor(accountId, existing.id))
      await assertOriginsReachable(this.#egress, pool.origins, monitor, `pool "${pool.name}": `);
    await this.#monitors.update(accountId, monitor);
    for (const listener of this.#listeners) await listener(accountId, monitor.id);
    return monitor;
  }
}
