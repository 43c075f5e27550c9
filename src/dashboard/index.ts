import type { Hono } from 'hono';
import type { AccountService } from '../accounts/index.ts';
import type { AppEnv } from '../api-kit/context.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { HealthEventBus } from '../load-balancing/index.ts';
import type { Clock } from '../shared/clock.ts';
import { LedgeError } from '../shared/errors.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import type { Logger } from '../shared/logger.ts';
import { buildDashboardAssets, type DashboardAssets } from './assets.ts';
import { readCookie, SESSION_COOKIE } from './cookies.ts';
import { liveRoutes } from './live.ts';
import { migrationRoutes } from './migration.ts';
import { credentialHeaders, dashboardRoutes, type DashboardEndpoints } from './routes.ts';
import { sameSecret, SessionStore } from './sessions.ts';

export { buildDashboardAssets, type DashboardAssets } from './assets.ts';
export { SessionStore } from './sessions.ts';
export { dashboardMigrations } from './migrations.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface Dashboard {
  /** For the API's auth middleware: a request's session credentials (src/api/auth.ts SessionCredentials). */
  credentials(request: Request): Promise<ReturnType<typeof credentialHeaders> | undefined>;
  mount(root: Hono<AppEnv>, api: (request: Request, env?: unknown) => Promise<Response>): void;
  /** Builds the bundle now (the server calls it at start, so the first page view does not wait). */
  assets(): Promise<DashboardAssets>;
}

/**
 * The browser dashboard: a page and its bundled script at `/`, cookie sessions standing in for API headers on
 * /client/v4 (CSRF token required on writes), and a few routes of its own under /dashboard/.
 */
export function createDashboard(deps: {
  accounts: AccountService;
  /** Where sessions live, shared by every node on the same database. */
  db: SqlDatabase;
  healthEvents?: HealthEventBus | undefined;
  logger: Logger;
  /** Sessions' expiry and the live stream's re-checks run on it; accessChanges is the signal to re-check at once. */
  clock: Clock;
  accessChanges?: AccessChanges | undefined;
  endpoints?: () => DashboardEndpoints;
}): Dashboard {
  const access = { clock: deps.clock, changes: deps.accessChanges };
  const sessions = new SessionStore(deps.db, access.clock);
  let built: Promise<DashboardAssets> | undefined;
  const assets = () =>
    (built ??= buildDashboardAssets().then(
      (result) => {
        deps.logger.debug('dashboard bundled', { ms: result.buildMs, files: result.files.size });
        return result;
      },
      (error: unknown) => {
        built = undefined;
        throw error;
      },
    ));
  return {
    async credentials(request) {
      const id = readCookie(request.headers.get('cookie'), SESSION_COOKIE);
      const session = id ? await sessions.get(id) : undefined;
      if (!session) return undefined;
      if (!SAFE_METHODS.has(request.method) && !sameSecret(request.headers.get('x-csrf-token') ?? '', session.csrf)) {
        throw new LedgeError(403, 10000, 'Missing or wrong x-csrf-token for this dashboard session');
      }
      return credentialHeaders(session.auth);
    },
    mount(root, api) {
      dashboardRoutes(root, {
        accounts: deps.accounts,
        sessions,
        assets,
        changes: deps.accessChanges,
        endpoints: deps.endpoints ?? (() => ({})),
      });
      liveRoutes(root, { accounts: deps.accounts, sessions, healthEvents: deps.healthEvents, access });
      migrationRoutes(root, { accounts: deps.accounts, sessions, api });
    },
    assets,
  };
}
