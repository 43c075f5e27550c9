/**
 * Who is calling, and what they may touch: built once per request by the auth middleware (accounts), read by
 * every route. It lives here, below the api kit and the subsystems, because both name it: the request context
 * carries one, and accounts makes it; in either folder, the other would have to import it back.
 * `accountIds` is already the intersection of the user's memberships and the token's account scope.
 */
export interface Principal {
  userId: string;
  email: string;
  via: 'global_key' | 'api_token';
  /** The API token used, when the request was made with one. */
  token: CallerToken | null;
  readOnly: boolean;
  accountIds: ReadonlySet<string>;
}

/** The API token a request was made with, as the accounts subsystem stores it (its `ApiToken`). */
export interface CallerToken {
  id: string;
  user_id: string;
  name: string;
  /** Set when the token is limited to one account. */
  account_id: string | null;
  read_only: boolean;
  status: 'active' | 'disabled' | 'expired';
  not_before: string | null;
  expires_on: string | null;
  created_on: string;
  /** Cloudflare's token `condition`: where requests made with it may come from (request-ip.ts enforces it). */
  condition: TokenCondition | null;
}

/** CIDR lists (IPv4 and IPv6) a request's address must be in, and must not be in. */
export interface TokenCondition {
  request_ip?: { in?: string[]; not_in?: string[] };
}

export function canAccessAccount(principal: Principal, accountId: string): boolean {
  return principal.accountIds.has(accountId);
}
