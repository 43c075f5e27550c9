import type { Hono } from 'hono';
import type { AccountService } from '../accounts/index.ts';
import type { AppEnv } from '../api-kit/context.ts';
import type { HealthEvent, HealthEventBus } from '../load-balancing/index.ts';
import { credentialHeaders, DashboardErrors, sessionOf } from './routes.ts';
import type { SessionStore } from './sessions.ts';

const KEEP_ALIVE_MS = 15_000;

/**
 * `GET /dashboard/events`: server-sent events of health transitions in the session's accounts, sent as soon as
 * the transaction recording them commits (the same events notifications consumes). The page refreshes what it
 * shows from /client/v4 on each; this stream only says that something changed, and what.
 */
export function liveRoutes(
  root: Hono<AppEnv>,
  deps: { accounts: AccountService; sessions: SessionStore; healthEvents: HealthEventBus | undefined },
): void {
  root.get('/dashboard/events', async (c) => {
    const session = await sessionOf(c, deps.sessions);
    if (!session) throw DashboardErrors.notSignedIn();
    const principal = await deps.accounts.authenticate(credentialHeaders(session.auth));
    const encoder = new TextEncoder();
    let unsubscribe = () => {};
    let timer: NodeJS.Timeout | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (text: string) => {
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            stop();
          }
        };
        const stop = () => {
          unsubscribe();
          clearInterval(timer);
        };
        send('retry: 2000\n\n');
        unsubscribe =
          deps.healthEvents?.subscribe(async (event, scope) => {
            if (!principal.accountIds.has(event.accountId)) return;
            scope.afterCommit(() => send(`event: health\ndata: ${JSON.stringify(render(event))}\n\n`));
          }) ?? (() => {});
        timer = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
        c.req.raw.signal.addEventListener('abort', () => {
          stop();
          try {
            controller.close();
          } catch {
            // already closed
          }
        });
      },
      cancel() {
        unsubscribe();
        clearInterval(timer);
      },
    });
    return new Response(stream, {
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    });
  });
}

function render(event: HealthEvent) {
  return {
    account_id: event.accountId,
    pool_id: event.poolId,
    pool_name: event.poolName,
    event_source: event.eventSource,
    origin_name: event.originName,
    new_health: event.newHealth,
    reason: event.reason,
    occurred_at: event.occurredAt,
  };
}
