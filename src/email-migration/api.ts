import type { ApiClient, Pool } from '../client/index.ts';

/** The fields of a pool the migration reads (of the SDK's pool type the client answers with). */
export type PoolSummary = Pick<Pool, 'id' | 'name' | 'notification_email'>;

export interface AlertPolicy {
  id: string;
  name: string;
  description?: string;
  enabled: boolean;
  alert_type: string;
  mechanisms: { email?: { id: string }[]; webhooks?: { id: string }[] };
  filters?: Record<string, string[]>;
  alert_interval?: string;
}

export type PolicyBody = Omit<AlertPolicy, 'id'>;

export interface Page<T> {
  items: T[];
  totalPages: number | undefined;
}

/**
 * The handful of /client/v4 calls the migration makes. Only public API: the same code migrates an
 * account on Ledge or on Cloudflare.
 */
export class MigrationApi {
  readonly #api: ApiClient;
  readonly #base: string;

  constructor(api: ApiClient, accountId: string) {
    this.#api = api;
    this.#base = `/accounts/${encodeURIComponent(accountId)}`;
  }

  async listPools(page: number, perPage: number): Promise<Page<PoolSummary>> {
    const response = await this.#api.request<PoolSummary[]>('GET', `${this.#base}/load_balancers/pools`, {
      query: { page, per_page: perPage },
    });
    return { items: response.result, totalPages: response.result_info?.total_pages };
  }

  /** Bulk PATCH: empties notification_email on every pool of one page; returns that page's pools. */
  async clearLegacyEmails(page: number, perPage: number): Promise<PoolSummary[]> {
    const response = await this.#api.request<PoolSummary[]>('PATCH', `${this.#base}/load_balancers/pools`, {
      query: { page, per_page: perPage },
      body: { notification_email: '' },
    });
    return response.result;
  }

  async listPolicies(): Promise<AlertPolicy[]> {
    const policies: AlertPolicy[] = [];
    for (let page = 1; ; page++) {
      const response = await this.#api.request<AlertPolicy[]>('GET', `${this.#base}/alerting/v3/policies`, {
        query: { page },
      });
      policies.push(...response.result);
      const totalPages = response.result_info?.total_pages;
      // Cloudflare answers this list unpaged; Ledge pages it. Stop at the last page either way.
      if (response.result.length === 0 || totalPages === undefined || page >= totalPages) return policies;
    }
  }

  async createPolicy(body: PolicyBody): Promise<string> {
    return (await this.#api.request<{ id: string }>('POST', `${this.#base}/alerting/v3/policies`, { body })).result.id;
  }

  async updatePolicy(id: string, body: PolicyBody): Promise<void> {
    await this.#api.request('PUT', `${this.#base}/alerting/v3/policies/${encodeURIComponent(id)}`, { body });
  }
}
