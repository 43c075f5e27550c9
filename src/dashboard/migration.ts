import type { Hono } from 'hono';
import { z } from 'zod';
import type { AccountService } from '../accounts/index.ts';
import { readJson } from '../api-kit/body.ts';
import { clientIpOf } from '../api-kit/client-ip.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ApiClient } from '../client/index.ts';
import { migrate, MigrationApi } from '../email-migration/index.ts';
import { credentialHeaders, DashboardErrors, requireCsrf, sameOrigin, sessionOf } from './routes.ts';
import type { SessionStore } from './sessions.ts';

const MigrationRun = z.strictObject({
  account_id: z.string().min(1),
  dry_run: z.boolean().default(false),
  per_page: z.number().int().min(5).max(1000).default(100),
});

/**
 * `POST /dashboard/migration`: the notification_email migration of `ledge notifications migrate`
 * (src/email-migration), run for the signed-in user. It reaches the API through /client/v4 in-process with the
 * session's own credential, so it can do exactly what that token could; the answer streams one JSON line per
 * step (`{"progress": ...}`) and ends with `{"report": ...}` or `{"error": ...}`.
 */
export function migrationRoutes(
  root: Hono<AppEnv>,
  deps: {
    accounts: AccountService;
    sessions: SessionStore;
    api: (request: Request, env?: unknown) => Promise<Response>;
  },
): void {
  root.post('/dashboard/migration', async (c) => {
    sameOrigin(c);
    const session = await sessionOf(c, deps.sessions);
    if (!session) throw DashboardErrors.notSignedIn();
    requireCsrf(c, session.csrf);
    const body = await readJson(c, MigrationRun, { code: 10000, emptyAs: {} });
    await deps.accounts.authenticate({ ...credentialHeaders(session.auth), clientIp: clientIpOf(c) });
    const origin = new URL(c.req.url).origin;
    const client = new ApiClient({
      apiUrl: `${origin}/client/v4`,
      auth: session.auth,
      userAgent: 'ledge-dashboard',
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        deps.api(new Request(input, init), c.env)) as typeof fetch,
    });
    const api = new MigrationApi(client, body.account_id);
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const line = (value: unknown) => controller.enqueue(encoder.encode(`${JSON.stringify(value)}\n`));
        try {
          const report = await migrate(api, {
            perPage: body.per_page,
            maxPasses: 10,
            dryRun: body.dry_run,
            newHealth: ['Healthy', 'Unhealthy'],
            eventSource: ['pool', 'origin'],
            webhookIds: [],
            progress: (message) => line({ progress: message.trim() }),
          });
          line({ report });
        } catch (error) {
          line({ error: error instanceof Error ? error.message : String(error) });
        }
        controller.close();
      },
    });
    return new Response(stream, { headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' } });
  });
}
