import type { Context, Hono } from 'hono';
import type { Principal } from '../shared/principal.ts';

/** What the middleware chain leaves on every request's context. */
export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
  };
}

export type ApiApp = Hono<AppEnv>;
export type ApiContext = Context<AppEnv>;
