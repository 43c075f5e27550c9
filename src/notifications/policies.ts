import { newId } from '../shared/ids.ts';
import { isoNow } from '../shared/time.ts';
import { NotificationErrors } from './errors.ts';
import { validatePolicy } from './policy-validation.ts';
import type { PolicyInput, PolicyUpdate } from './schemas.ts';
import type { NotificationStore } from './store.ts';
import type { Policy, PoolDirectory } from './types.ts';
import type { Clock } from '../shared/clock.ts';

export function renderPolicy(policy: Policy) {
  return {
    id: policy.id,
    name: policy.name,
    description: policy.description,
    enabled: policy.enabled,
    alert_type: policy.alert_type,
    mechanisms: policy.mechanisms,
    filters: policy.filters,
    ...(policy.alert_interval ? { alert_interval: policy.alert_interval } : {}),
    created: policy.created,
    modified: policy.modified,
  };
}

/** Alert policies: validated against the catalogue and the account before anything is written. */
export class AlertPolicies {
  readonly #store: NotificationStore;
  readonly #pools: PoolDirectory;

  readonly #clock: Clock;

  constructor(deps: { store: NotificationStore; pools: PoolDirectory }, clock: Clock) {
    this.#clock = clock;
    this.#store = deps.store;
    this.#pools = deps.pools;
  }

  async create(accountId: string, input: PolicyInput): Promise<Policy> {
    await validatePolicy(accountId, input, { store: this.#store, pools: this.#pools });
    const now = isoNow(this.#clock);
    const policy: Policy = {
      id: newId(),
      account_id: accountId,
      name: input.name,
      description: input.description ?? '',
      enabled: input.enabled,
      alert_type: input.alert_type,
      mechanisms: input.mechanisms,
      filters: input.filters ?? {},
      alert_interval: input.alert_interval ?? null,
      created: now,
      modified: now,
    };
    await this.#store.insertPolicy(policy);
    return policy;
  }

  /** PUT overwrites the fields it carries and keeps the others; the result is validated as a whole. */
  async update(accountId: string, id: string, changes: PolicyUpdate): Promise<Policy> {
    const existing = await this.get(accountId, id);
    const input: PolicyInput = {
      name: changes.name ?? existing.name,
      description: changes.description ?? existing.description,
      enabled: changes.enabled ?? existing.enabled,
      alert_type: changes.alert_type ?? existing.alert_type,
      mechanisms: changes.mechanisms ?? existing.mechanisms,
      filters: changes.filters ?? existing.filters,
      alert_interval: changes.alert_interval ?? existing.alert_interval ?? undefined,
    };
    await validatePolicy(accountId, input, { store: this.#store, pools: this.#pools });
    const policy: Policy = {
      ...existing,
      name: input.name,
      description: input.description ?? '',
      enabled: input.enabled,
      alert_type: input.alert_type,
      mechanisms: input.mechanisms,
      filters: input.filters ?? {},
      alert_interval: input.alert_interval ?? null,
      modified: isoNow(this.#clock),
    };
    await this.#store.updatePolicy(policy);
    return policy;
  }

  async get(accountId: string, id: string): Promise<Policy> {
    const policy = await this.#store.getPolicy(accountId, id);
    if (!policy) throw NotificationErrors.policyNotFound(id);
    return policy;
  }

  list(accountId: string): Promise<Policy[]> {
    return this.#store.listPolicies(accountId);
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.#store.deletePolicy(accountId, id))) throw NotificationErrors.policyNotFound(id);
  }
}
