import type { Context, Hono } from 'hono';
import type { GrantCheck, GrantWatcher } from '../shared/grant-watch.ts';
import type { Principal } from '../shared/principal.ts';

/** What the middleware chain leaves on every request's context. */
export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    /** Re-checks the request's credential (see auth.ts): for answers that outlive the request's start. */
    grant: GrantCheck;
    /** Ends a stream once its grant is gone (re-checked periodically and on every access change). */
    watchGrant: GrantWatcher;
  };
}

export type ApiApp = Hono<AppEnv>;
export type ApiContext = Context<AppEnv>;
