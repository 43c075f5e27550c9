import { Hono } from 'hono';
import type { AccountService } from '../accounts/index.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Clock } from '../shared/clock.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import type { Logger } from '../shared/logger.ts';
import { authMiddleware, type SessionCredentials } from './auth.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { errorResponse, throwRouteNotFound } from './errors.ts';
import { metricsHandler } from './metrics-route.ts';
import { requestLog } from './request-log.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';

export const API_PREFIX = '/client/v4';

/** The services the API serves (the platform has them; tests and embedders may pass their own). */
export interface ApiDependencies {
  logger: Logger;
  /** Authenticates every request. */
  accounts: AccountService;
  /** Each mounts its routes, in this order. */
  subsystems: readonly Subsystem[];
  /** What /metrics exposes, behind `config.metricsToken`. */
  metrics: LedgeMetrics;
  config: { metricsToken?: string | undefined };
  /**
   * For `GET /healthz` (what a load balancer in front of several nodes checks): resolves when this node can
   * serve, i.e. its database answers. Without it /healthz answers 200 while the process runs.
   */
  ready?: (() => Promise<void>) | undefined;
  /** The browser dashboard at `/` (src/dashboard/): its pages, and its cookie sessions as credentials. */
  dashboard?: DashboardMount | undefined;
  /** What open streams re-check their grant on (default: the system's clock). */
  clock: Clock;
  /** Access taken away in this process: open streams re-check their grant at once. */
  accessChanges?: AccessChanges | undefined;
}

/** What the app needs of the dashboard: its session lookup, and its routes mounted outside /client/v4. */
export interface DashboardMount {
  credentials: SessionCredentials;
  /** Mounts the pages, assets and session routes; `api` is the /client/v4 app they call in-process. */
  mount(root: Hono<AppEnv>, api: (request: Request, env?: unknown) => Promise<Response>): void;
}

/**
 * The /client/v4 application: request log -> authentication and account access -> subsystem routes.
 * Errors from anywhere below are turned into the v4 envelope by `errorResponse`, in one place.
 */
export function createApiApp(platform: ApiDependencies): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.use('*', requestLog(platform.logger, platform.metrics, API_PREFIX));
  for (const subsystem of platform.subsystems) subsystem.mountTokenRoutes?.(api);
  api.use(
    '*',
    authMiddleware(platform.accounts, platform.dashboard?.credentials, {
      clock: platform.clock,
      changes: platform.accessChanges,
    }),
  );

  for (const subsystem of platform.subsystems) subsystem.mountRoutes(api);

  api.notFound(throwRouteNotFound);
  api.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId'), c.req.raw));

  const root = new Hono<AppEnv>();
  // Before the API: the dashboard adds its headers to /client/v4 answers, and calls the API in-process.
  platform.dashboard?.mount(root, async (request, env) => root.fetch(request, env));
  root.route(API_PREFIX, api);
  // Prometheus scrapes here, with the metrics token (see metrics-route.ts).
  root.get('/metrics', metricsHandler(platform.metrics, platform.config.metricsToken, platform.logger));
  root.get('/healthz', async (c) => {
    try {
      await platform.ready?.();
      return c.json({ status: 'ok' });
    } catch {
      return c.json({ status: 'unavailable' }, 503);
    }
  });
  root.notFound(throwRouteNotFound);
  root.onError((error, c) => errorResponse(error, platform.logger, c.get('requestId'), c.req.raw));
  return root;
}
