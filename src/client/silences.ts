import type { ApiClient } from './api-client.ts';

/** A policy silenced for a window (`/alerting/v3/silences`). */
export interface AlertSilence {
  id: string;
  policy_id: string;
  start_time: string;
  end_time: string;
  created_at: string;
  updated_at: string;
}

const path = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/alerting/v3/silences`;

/** The account's silences. */
export async function listSilences(api: ApiClient, accountId: string): Promise<AlertSilence[]> {
  return (await api.request<AlertSilence[]>('GET', path(accountId))).result;
}

/** Silences policies for windows (one request, all or none); answers the silences made. */
export async function createSilences(
  api: ApiClient,
  accountId: string,
  body: { policy_id: string; start_time?: string; end_time: string }[],
): Promise<AlertSilence[]> {
  return (await api.request<AlertSilence[]>('POST', path(accountId), { body })).result;
}

/** Moves the windows of existing silences. */
export async function updateSilences(
  api: ApiClient,
  accountId: string,
  body: { id: string; start_time?: string; end_time?: string }[],
): Promise<AlertSilence[]> {
  return (await api.request<AlertSilence[]>('PUT', path(accountId), { body })).result;
}

/** Ends a silence (deletes it). */
export async function deleteSilence(api: ApiClient, accountId: string, id: string): Promise<void> {
  await api.request('DELETE', `${path(accountId)}/${encodeURIComponent(id)}`);
}
