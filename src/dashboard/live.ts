import type { Hono } from 'hono';
import type { AccountService } from '../accounts/index.ts';
import { clientIpOf } from '../api-kit/client-ip.ts';
import type { AppEnv } from '../api-kit/context.ts';
import type { Clock } from '../shared/clock.ts';
import { watchGrant, type AccessChanges } from '../shared/grant-watch.ts';
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
  deps: {
    accounts: AccountService;
    sessions: SessionStore;
    healthEvents: HealthEventBus | undefined;
    access: { clock: Clock; changes?: AccessChanges | undefined };
  },
): void {
  root.get('/dashboard/events', async (c) => {
    const session = await sessionOf(c, deps.sessions);
    if (!session) throw DashboardErrors.notSignedIn();
    const clientIp = clientIpOf(c);
    const principal = await deps.accounts.authenticate({ ...credentialHeaders(session.auth), clientIp });
    // Signed out, its token revoked, or the user no longer a member: the stream ends (the session re-read each time).
    const grant = async () => {
      try {
        const now = await sessionOf(c, deps.sessions);
        if (!now) return false;
        const again = await deps.accounts.authenticate({ ...credentialHeaders(now.auth), clientIp });
        return [...principal.accountIds].every((id) => again.accountIds.has(id));
      } catch {
        return false;
      }
    };
    const encoder = new TextEncoder();
    let unsubscribe = () => {};
    let unwatch = () => {};
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
          unwatch();
          clearInterval(timer);
        };
        const end = () => {
          stop();
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        send('retry: 2000\n\n');
        unsubscribe =
          deps.healthEvents?.subscribe(async (event, scope) => {
            if (!principal.accountIds.has(event.accountId)) return;
            scope.afterCommit(() => send(`event: health\ndata: ${JSON.stringify(render(event))}\n\n`));
          }) ?? (() => {});
        timer = setInterval(() => send(': keep-alive\n\n'), KEEP_ALIVE_MS);
        unwatch = watchGrant(grant, end, deps.access);
        c.req.raw.signal.addEventListener('abort', end);
      },
      cancel() {
        unsubscribe();
        unwatch();
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
