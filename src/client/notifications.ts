import type { ApiClient } from './api-client.ts';
import type { NotificationHistoryItem, NotificationPolicy, WebhookDestination } from './wire.ts';

export type NotificationPolicyInput = Omit<NotificationPolicy, 'id' | 'created' | 'modified' | 'description'> & {
  description?: string;
};

const base = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/alerting/v3`;

/** Notification policies of an account (`GET /alerting/v3/policies`). */
export async function listPolicies(api: ApiClient, accountId: string): Promise<NotificationPolicy[]> {
  return (await api.request<NotificationPolicy[]>('GET', `${base(accountId)}/policies`)).result;
}

export async function getPolicy(api: ApiClient, accountId: string, id: string): Promise<NotificationPolicy> {
  return (await api.request<NotificationPolicy>('GET', `${base(accountId)}/policies/${encodeURIComponent(id)}`)).result;
}

/** Creates a policy; returns its id. */
export async function createPolicy(api: ApiClient, accountId: string, input: NotificationPolicyInput): Promise<string> {
  return (await api.request<{ id: string }>('POST', `${base(accountId)}/policies`, { body: input })).result.id;
}

/** Changes the given fields of a policy (the others are kept). */
export async function updatePolicy(
  api: ApiClient,
  accountId: string,
  id: string,
  changes: Partial<NotificationPolicyInput>,
): Promise<string> {
  return (
    await api.request<{ id: string }>('PUT', `${base(accountId)}/policies/${encodeURIComponent(id)}`, { body: changes })
  ).result.id;
}

export async function deletePolicy(api: ApiClient, accountId: string, id: string): Promise<void> {
  await api.request('DELETE', `${base(accountId)}/policies/${encodeURIComponent(id)}`);
}

export async function listWebhooks(api: ApiClient, accountId: string): Promise<WebhookDestination[]> {
  return (await api.request<WebhookDestination[]>('GET', `${base(accountId)}/destinations/webhooks`)).result;
}

/** Creates a webhook destination; the server sends a test message first and refuses non-2xx receivers. */
export async function createWebhook(
  api: ApiClient,
  accountId: string,
  input: { name: string; url: string; secret?: string },
): Promise<string> {
  return (await api.request<{ id: string }>('POST', `${base(accountId)}/destinations/webhooks`, { body: input })).result
    .id;
}

export async function deleteWebhook(api: ApiClient, accountId: string, id: string): Promise<void> {
  await api.request('DELETE', `${base(accountId)}/destinations/webhooks/${encodeURIComponent(id)}`);
}

/** One page of delivery history, newest first. */
export async function listHistory(
  api: ApiClient,
  accountId: string,
  query: { page?: number; per_page?: number; since?: string; before?: string } = {},
): Promise<{ items: NotificationHistoryItem[]; totalCount: number }> {
  const response = await api.request<NotificationHistoryItem[]>('GET', `${base(accountId)}/history`, { query });
  return { items: response.result, totalCount: response.result_info?.total_count ?? response.result.length };
}
