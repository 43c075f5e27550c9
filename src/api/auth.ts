import type { MiddlewareHandler } from 'hono';
import { AuthErrors, canAccessAccount, type AccountService } from '../accounts/index.ts';
import { clientIpOf } from '../api-kit/client-ip.ts';
import type { AppEnv } from '../api-kit/context.ts';
import type { Clock } from '../shared/clock.ts';
import { watchGrant, type AccessChanges, type GrantCheck } from '../shared/grant-watch.ts';

const ACCOUNT_PATH = /^\/client\/v4\/accounts\/([^/]+)(?:\/|$)/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The credentials a request carries, in the headers' shape (what AccountService.authenticate takes). */
export interface CredentialHeaders {
  authorization?: string | undefined;
  email?: string | undefined;
  key?: string | undefined;
  clientIp?: string | undefined;
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
export function authMiddleware(
  accounts: AccountService,
  session: SessionCredentials | undefined,
  access: { clock: Clock; changes?: AccessChanges | undefined },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const headers: CredentialHeaders = {
      authorization: c.req.header('authorization'),
      email: c.req.header('x-auth-email'),
      key: c.req.header('x-auth-key'),
    };
    const clientIp = clientIpOf(c);
    // API headers always win; a cookie session only stands in for a request that carries none.
    const usesSession = headers.authorization === undefined && headers.key === undefined;
    const fromSession = usesSession ? await session?.(c.req.raw) : undefined;
    const principal = await accounts.authenticate({ ...(fromSession ?? headers), clientIp });
    c.set('principal', principal);
    const rawAccountId = ACCOUNT_PATH.exec(new URL(c.req.url).pathname)?.[1];
    const accountId = rawAccountId === undefined ? undefined : decodeSegment(rawAccountId);
    if (accountId !== undefined && !canAccessAccount(principal, accountId)) {
      throw AuthErrors.accountForbidden();
    }
    if (principal.readOnly && !SAFE_METHODS.has(c.req.method)) throw AuthErrors.readOnly();
    // The same credential, looked up again (a session re-read: signed out, it is gone): what a stream that
    // outlives this request checks to end when its access does.
    const grant: GrantCheck = async (ip = clientIp) => {
      try {
        const again = usesSession ? await session?.(c.req.raw) : undefined;
        const now = await accounts.authenticate({ ...(again ?? headers), clientIp: ip });
        return accountId === undefined || canAccessAccount(now, accountId);
      } catch {
        return false;
      }
    };
    c.set('grant', grant);
    c.set('watchGrant', (onRevoked) => watchGrant(grant, onRevoked, access));
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
