import type { ApiClient } from './api-client.ts';

export interface AccountSummary {
  id: string;
  name: string;
  type?: string;
  created_on?: string;
}

/** The authenticated user (`GET /user`). */
export async function getUser(api: ApiClient): Promise<{ id: string; email: string }> {
  return (await api.request<{ id: string; email: string }>('GET', '/user')).result;
}

/** Every account the credentials can reach, through all pages. */
export async function listAccounts(api: ApiClient): Promise<AccountSummary[]> {
  const accounts: AccountSummary[] = [];
  for await (const account of api.paginate<AccountSummary>('/accounts', {}, 50)) accounts.push(account);
  return accounts;
}

/** The token the client authenticates with (`GET /user/tokens/verify`): its id and status. */
export async function verifyToken(api: ApiClient): Promise<{ id: string; status: string }> {
  return (await api.request<{ id: string; status: string }>('GET', '/user/tokens/verify')).result;
}
