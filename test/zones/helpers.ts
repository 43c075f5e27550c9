import type { TestLedge } from '../helpers/ledge.ts';
import type { ApiAnswer } from '../load-balancing/helpers.ts';

/** Calls /client/v4 of a test server with the bootstrap token (or the headers given). */
export function apiClient(ledge: TestLedge, headers: Record<string, string> = ledge.tokenHeaders) {
  return async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await fetch(ledge.apiUrl + path, init);
    return { status: res.status, body: await res.json() };
  };
}

export type ApiCall = ReturnType<typeof apiClient>;

/** A second user with their own account and token: the owner of "foreign" resources. */
export async function otherTenant(ledge: TestLedge, name: string) {
  const accounts = ledge.server.platform.accounts;
  const account = await accounts.createAccount({ name });
  const { user } = await accounts.createUser({ email: `${name}@example.org` });
  await accounts.addMember(account.id, user.id);
  const { value } = await accounts.createToken({ userId: user.id, name: `${name}-token` });
  return { accountId: account.id, call: apiClient(ledge, { authorization: `Bearer ${value}` }) };
}
