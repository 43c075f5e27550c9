import { Hono } from 'hono';
import { accountRoutes } from '../accounts/index.ts';
import { loadBalancingRoutes } from '../load-balancing/index.ts';
import { notificationRoutes } from '../notifications/index.ts';
import type { Platform } from '../server/platform.ts';
import { scriptUploadLimit, workerRoutes } from '../workers/index.ts';
import { r2Routes } from '../r2/index.ts';
import { authMiddleware } from './auth.ts';
import type { AppEnv } from './context.ts';
import { errorResponse, throwRouteNotFound } from './errors.ts';
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
  api.route('/accounts/:account_id/load_balancers', loadBalancingRoutes(platform.loadBalancing));
  api.route('/', notificationRoutes(platform.notifications));
  api.route(
    '/',
    workerRoutes(platform.functions.workers, platform.functions.logs, {
      uploadLimit: scriptUploadLimit(platform.config.env),
      tails: platform.functions.tails,
    }),
  );
  api.route('/', r2Routes(platform.storage));

  api.notFound(throwRouteNotFound);
  api.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId'), c.req.raw));

  const root = new Hono<AppEnv>();
  root.route(API_PREFIX, api);
  root.notFound(throwRouteNotFound);
  root.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId'), c.req.raw));
  return root;
}
