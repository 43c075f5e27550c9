import { Hono } from 'hono';
import { accountRoutes } from '../accounts/index.ts';
import type { Platform } from '../server/platform.ts';
import { authMiddleware } from './auth.ts';
import type { AppEnv } from './context.ts';
import { errorResponse, notFoundResponse } from './errors.ts';
import { requestLog } from './request-log.ts';

export const API_PREFIX = '/client/v4';

/**
 * The /client/v4 application: request log -> authentication and account access -> subsystem routes.
 * Errors from anywhere below are turned into the v4 envelope by `errorResponse`, in one place.
 */
export function createApiApp(platform: Platform): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.use('*', requestLog(platform.logger));
  api.use('*', authMiddleware(platform.accounts));

  api.route('/', accountRoutes(platform.accounts));
  // Subsystem routes are mounted here, each under its own prefix.

  api.notFound(notFoundResponse);
  api.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId')));

  const root = new Hono<AppEnv>();
  root.route(API_PREFIX, api);
  root.notFound(notFoundResponse);
  root.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId')));
  return root;
}
