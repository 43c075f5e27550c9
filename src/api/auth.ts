import type { MiddlewareHandler } from 'hono';
import { AuthErrors, canAccessAccount, type AccountService } from '../accounts/index.ts';
import type { AppEnv } from '../api-kit/context.ts';

const ACCOUNT_PATH = /^\/client\/v4\/accounts\/([^/]+)(?:\/|$)/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The credentials a request carries, in the headers' shape (what AccountService.authenticate takes). */
export interface CredentialHeaders {
  authorization?: string | undefined;
  email?: string | undefined;
  key?: string | undefined;
}

/**
 * Where a request without API headers may get its credentials: the dashboard's cookie session (src/dashboard/).
 * It throws when the session is there but the request may not use it (a write without the session's CSRF token).
 */
export type SessionCredentials = (request: Request) => Promise<CredentialHeaders | undefined>;

/**
 * Authenticates every /client/v4 request, then applies the two rules that hold for all routes:
 * `/accounts/{id}/...` requires membership (an unknown and a foreign account get the same 403), and a
 * read-only token may not change anything.
 */
export function authMiddleware(accounts: AccountService, session?: SessionCredentials): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const headers: CredentialHeaders = {
      authorization: c.req.header('authorization'),
      email: c.req.header('x-auth-email'),
      key: c.req.header('x-auth-key'),
    };
    // API headers always win; a cookie session only stands in for a request that carries none.
    const fromSession =
      headers.authorization === undefined && headers.key === undefined ? await session?.(c.req.raw) : undefined;
    const principal = await accounts.authenticate(fromSession ?? headers);
    c.set('principal', principal);
    const accountId = ACCOUNT_PATH.exec(new URL(c.req.url).pathname)?.[1];
    if (accountId !== undefined && !canAccessAccount(principal, decodeSegment(accountId))) {
      throw AuthErrors.accountForbidden();
    }
    if (principal.readOnly && !SAFE_METHODS.has(c.req.method)) throw AuthErrors.readOnly();
    await next();
  };
}

/** A malformed escape (`%ff`) names no account: kept as written, it is refused like any unknown one. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
