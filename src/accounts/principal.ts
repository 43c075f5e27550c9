import type { ApiToken } from './types.ts';

/**
 * Who is calling, and what they may touch. Built once per request by the auth middleware.
 * `accountIds` is already the intersection of the user's memberships and the token's account scope.
 */
export interface Principal {
  userId: string;
  email: string;
  via: 'global_key' | 'api_token';
  /** The API token used, when the request was made with one. */
  token: ApiToken | null;
  readOnly: boolean;
  accountIds: ReadonlySet<string>;
}

export function canAccessAccount(principal: Principal, accountId: string): boolean {
  return principal.accountIds.has(accountId);
}
