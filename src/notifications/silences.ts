import { z } from 'zod';
import type { SqlDatabase } from '../db/index.ts';
import { clip, LedgeError } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { NOTIFICATION_VALIDATION_CODE } from './errors.ts';
import type { AlertPolicies } from './policies.ts';
import { SqlSilenceStore, type Silence } from './silence-store.ts';
import type { Clock } from '../shared/clock.ts';

/** How long the dispatcher trusts its copy of the silences (changes made on this node apply at once). */
const REFRESH_MS = 1_000;

const Time = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 date and time');

export const SilenceCreateSchema = z
  .array(z.strictObject({ policy_id: z.string().min(1), start_time: Time.optional(), end_time: Time }))
  .min(1, 'give at least one silence')
  .max(100);
export const SilenceUpdateSchema = z
  .array(z.strictObject({ id: z.string().min(1), start_time: Time.optional(), end_time: Time.optional() }))
  .min(1, 'give at least one silence')
  .max(100);

export const SilenceErrors = {
  notFound: (id: string) => new LedgeError(404, 17011, `silence ${clip(id)} not found`),
  window: (index: number) =>
    new LedgeError(400, NOTIFICATION_VALIDATION_CODE, `[${index}]: end_time must be after start_time`),
};

/** Cloudflare's shape of a silence. */
export function renderSilence(s: Silence) {
  return {
    id: s.id,
    policy_id: s.policy_id,
    start_time: new Date(s.start_ms).toISOString(),
    end_time: new Date(s.end_ms).toISOString(),
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

/**
 * Alert silences: an operator silences a policy for a maintenance window, and the dispatcher records the
 * policy's alerts in that window as `silenced` instead of delivering them. The dispatcher asks `silencedBy`
 * (synchronous, from a copy refreshed every second and at once after a change here).
 */
export class AlertSilences {
  readonly #db: SqlDatabase;
  readonly #store: SqlSilenceStore;
  readonly #policies: AlertPolicies;
  #active: Silence[] = [];
  #timer: NodeJS.Timeout | undefined;

  readonly #clock: Clock;

  constructor(deps: { db: SqlDatabase; policies: AlertPolicies }, clock: Clock) {
    this.#clock = clock;
    this.#db = deps.db;
    this.#store = new SqlSilenceStore(deps.db);
    this.#policies = deps.policies;
  }

  async create(
    accountId: string,
    input: z.infer<typeof SilenceCreateSchema>,
    now = this.#clock.now(),
  ): Promise<Silence[]> {
    const iso = new Date(now).toISOString();
    const silences: Silence[] = [];
    for (const [index, item] of input.entries()) {
      await this.#policies.get(accountId, item.policy_id);
      const start = item.start_time === undefined ? now : Date.parse(item.start_time);
      const end = Date.parse(item.end_time);
      if (end <= start) throw SilenceErrors.window(index);
      silences.push({
        id: newId(),
        account_id: accountId,
        policy_id: item.policy_id,
        start_ms: start,
        end_ms: end,
        created_at: iso,
        updated_at: iso,
      });
    }
    await this.#db.transaction(async (tx) => {
      for (const silence of silences) await this.#store.insert(silence, tx);
    });
    await this.refresh();
    return silences;
  }

  /** Moves the windows of several silences at once: all or none. */
  async update(
    accountId: string,
    input: z.infer<typeof SilenceUpdateSchema>,
    now = this.#clock.now(),
  ): Promise<Silence[]> {
    const updated = await this.#db.transaction(async (tx) => {
      const out: Silence[] = [];
      for (const [index, item] of input.entries()) {
        const current = await this.#store.get(accountId, item.id, tx);
        if (!current) throw SilenceErrors.notFound(item.id);
        const start_ms = item.start_time === undefined ? current.start_ms : Date.parse(item.start_time);
        const end_ms = item.end_time === undefined ? current.end_ms : Date.parse(item.end_time);
        if (end_ms <= start_ms) throw SilenceErrors.window(index);
        const updated_at = new Date(now).toISOString();
        await this.#store.update(accountId, item.id, { start_ms, end_ms, updated_at }, tx);
        out.push({ ...current, start_ms, end_ms, updated_at });
      }
      return out;
    });
    await this.refresh();
    return updated;
  }

  list(accountId: string): Promise<Silence[]> {
    return this.#store.list(accountId);
  }

  async get(accountId: string, id: string): Promise<Silence> {
    const silence = await this.#store.get(accountId, id);
    if (!silence) throw SilenceErrors.notFound(id);
    return silence;
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.#store.delete(accountId, id))) throw SilenceErrors.notFound(id);
    await this.refresh();
  }

  /** The silence that covers an alert of `policyId` raised at `eventMs`, if any. */
  silencedBy(accountId: string, policyId: string, eventMs: number): Silence | undefined {
    return this.#active.find(
      (s) => s.policy_id === policyId && s.account_id === accountId && s.start_ms <= eventMs && eventMs < s.end_ms,
    );
  }

  /** Reloads the copy the dispatcher reads (silences another node changed arrive within REFRESH_MS). */
  async refresh(): Promise<void> {
    // Kept a little past their end: an alert raised just before the end may be dispatched just after it.
    this.#active = await this.#store.notOverAt(this.#clock.now() - 60_000);
  }

  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh().catch(() => undefined), REFRESH_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
