import { createHash } from 'node:crypto';
import { addressKey, parseAddresses } from './addresses.ts';
import type { AlertPolicy, MigrationApi, PolicyBody, PoolSummary } from './api.ts';
import { HEALTH_ALERT, isCovered } from './coverage.ts';
import type { MigrationPolicyChange } from '../client/index.ts';

export interface PolicyOptions {
  newHealth: readonly string[];
  eventSource: readonly string[];
  webhookIds: readonly string[];
}

/** One policy the plan creates or extends (the wire shape the report carries). */
export type PolicyChange = MigrationPolicyChange;

/**
 * The deterministic marker of the policy that carries one recipient group. It is derived from the
 * addresses alone, so a re-run (after success, or after being killed at any point) finds the policy it
 * created before instead of creating a duplicate.
 */
export function markerFor(addresses: readonly string[]): string {
  return `ledge-migration:v1:${createHash('sha256').update(addressKey(addresses)).digest('hex').slice(0, 16)}`;
}

/** Groups legacy pools by their set of addresses. */
export function groupByAddresses(pools: readonly PoolSummary[]): { addresses: string[]; pools: PoolSummary[] }[] {
  const groups = new Map<string, { addresses: string[]; pools: PoolSummary[] }>();
  for (const pool of pools) {
    const addresses = parseAddresses(pool.notification_email);
    if (addresses.length === 0) continue;
    const key = addressKey(addresses);
    const group = groups.get(key) ?? { addresses, pools: [] };
    group.pools.push(pool);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/**
 * Keeps the account's policies in view and makes sure legacy pools are covered before anything
 * empties their email: each uncovered pool ends up in the marked policy of its address group.
 */
export class PolicyCoverage {
  readonly #api: MigrationApi;
  readonly #options: PolicyOptions;
  #policies: AlertPolicy[] = [];
  readonly created = new Set<string>();
  readonly reused = new Set<string>();

  constructor(api: MigrationApi, options: PolicyOptions) {
    this.#api = api;
    this.#options = options;
  }

  async refresh(): Promise<void> {
    this.#policies = await this.#api.listPolicies();
  }

  isCovered(pool: PoolSummary): boolean {
    return isCovered(this.#policies, pool);
  }

  /** What `ensure` would do, without doing it (dry run). */
  plan(pools: readonly PoolSummary[]): PolicyChange[] {
    const changes: PolicyChange[] = [];
    for (const group of groupByAddresses(pools)) {
      const marked = this.#marked(group.addresses);
      const uncovered = group.pools.filter((pool) => !isCovered(this.#policies, pool));
      if (marked) this.reused.add(marked.id);
      if (uncovered.length === 0) continue;
      changes.push({
        action: marked ? 'extend' : 'create',
        policyId: marked?.id ?? null,
        name: marked?.name ?? policyName(group.addresses),
        addresses: group.addresses,
        poolIds: uncovered.map((pool) => pool.id),
      });
    }
    return changes;
  }

  /** Creates or extends the marked policies so that every given pool is covered; returns what changed. */
  async ensure(pools: readonly PoolSummary[]): Promise<PolicyChange[]> {
    const changes = this.plan(pools);
    for (const change of changes) {
      const marked = change.policyId ? this.#policies.find((p) => p.id === change.policyId) : undefined;
      if (marked) {
        const body = this.#extended(marked, change);
        await this.#api.updatePolicy(marked.id, body);
        Object.assign(marked, body);
      } else {
        const body = this.#newPolicy(change);
        const id = await this.#api.createPolicy(body);
        this.#policies.push({ id, ...body });
        this.created.add(id);
        change.policyId = id;
      }
    }
    return changes;
  }

  #marked(addresses: readonly string[]): AlertPolicy | undefined {
    const marker = markerFor(addresses);
    return this.#policies.find((p) => p.alert_type === HEALTH_ALERT && p.description?.includes(marker));
  }

  #newPolicy(change: PolicyChange): PolicyBody {
    const mechanisms: PolicyBody['mechanisms'] = { email: change.addresses.map((id) => ({ id })) };
    if (this.#options.webhookIds.length > 0) mechanisms.webhooks = this.#options.webhookIds.map((id) => ({ id }));
    return {
      name: change.name,
      description:
        `Pool health alerts migrated from the legacy notification_email by \`ledge notifications migrate\`. ` +
        `Marker (keep it, re-runs use it): ${markerFor(change.addresses)}`,
      enabled: true,
      alert_type: HEALTH_ALERT,
      mechanisms,
      filters: {
        pool_id: [...change.poolIds].sort(),
        new_health: [...this.#options.newHealth],
        event_source: [...this.#options.eventSource],
      },
    };
  }

  /** The marked policy with the new pools and (if it lost any) the group's addresses added back. */
  #extended(policy: AlertPolicy, change: PolicyChange): PolicyBody {
    const emails = new Map((policy.mechanisms.email ?? []).map((e) => [e.id.toLowerCase(), e]));
    for (const address of change.addresses)
      if (!emails.has(address.toLowerCase())) emails.set(address.toLowerCase(), { id: address });
    const filters = { ...policy.filters };
    if (filters['pool_id']) filters['pool_id'] = [...new Set([...filters['pool_id'], ...change.poolIds])].sort();
    const body: PolicyBody = {
      name: policy.name,
      description: policy.description ?? '',
      enabled: true,
      alert_type: policy.alert_type,
      mechanisms: { ...policy.mechanisms, email: [...emails.values()] },
      filters,
    };
    if (policy.alert_interval) body.alert_interval = policy.alert_interval;
    return body;
  }
}

function policyName(addresses: readonly string[]): string {
  const name = `Pool health alerts to ${addresses.join(', ')}`;
  return name.length <= 256 ? name : `${name.slice(0, 253)}...`;
}
