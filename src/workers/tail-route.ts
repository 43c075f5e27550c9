import type { IncomingMessage } from 'node:http';
import type { Hono } from 'hono';
import { readJson } from '../api-kit/body.ts';
import type { AppEnv } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import { BytePace } from './history-rate.ts';
import type { FunctionLogHub } from '../workerd/index.ts';
import type { WorkersService } from './service.ts';
import { resolveSelf, tailCreateBodySchema } from './tail/filters.ts';
import type { TailSessions } from './tail/sessions.ts';

/**
 * Tail sessions as `wrangler tail` uses them: POST .../tails `{filters}` -> `{id, url, expires_at}` (url: the
 * session's WebSocket, see tail/sessions.ts), GET .../tails (this script's sessions), DELETE .../tails/{id}.
 * A deleted script's sessions end.
 */
export function mountTailSessionRoutes(app: Hono<AppEnv>, workers: WorkersService, tails: TailSessions): void {
  const base = '/accounts/:account_id/workers/scripts/:script';
  app.post(`${base}/tails`, async (c) => {
    const accountId = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(accountId, script);
    const body = await readJson(c, tailCreateBodySchema, { code: 10021, emptyAs: {} });
    const peer = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress;
    const filters = resolveSelf(body.filters, peer?.replace(/^::ffff:/, ''));
    const access = { check: c.get('grant'), watch: c.get('watchGrant') };
    return ok(c, tails.create(accountId, script, filters, new URL(c.req.url).origin, access));
  });
  app.get(`${base}/tails`, async (c) => {
    const accountId = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(accountId, script);
    return ok(c, tails.list(accountId, script));
  });
  app.delete(`${base}/tails/:tail_id`, async (c) => {
    const accountId = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(accountId, script);
    if (!tails.delete(accountId, script, c.req.param('tail_id'))) throw WorkerErrors.tailNotFound();
    return ok(c, null);
  });
  app.use(base, async (c, next) => {
    await next();
    if (c.req.method === 'DELETE' && c.res.ok) tails.closeScript(c.req.param('account_id')!, c.req.param('script')!);
  });
}

/** A follower that does not read is cut off from live lines once this much waits for it (lines are dropped). */
const LIVE_BACKLOG_BYTES = 1024 * 1024;

/**
 * `GET .../scripts/{script}/tail?history=N[&follow=false]`: a Ledge extension that streams a function's
 * console output as NDJSON (the last N kept lines first, then live lines until the client disconnects;
 * with follow=false only the kept lines). `ledge tail --history` reads the kept lines here. The kept lines
 * are read chunk by chunk as the client takes them (log-file.ts, log-history.ts): a history of many
 * megabytes never sits in memory or on the event loop at once; an account's reads together are paced at
 * HISTORY_BYTES_PER_SECOND (history-rate.ts).
 */
export function mountTailRoute(app: Hono<AppEnv>, workers: WorkersService, logs: FunctionLogHub): void {
  const pace = new BytePace();
  app.get('/accounts/:account_id/workers/scripts/:script/tail', async (c) => {
    const accountId = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(accountId, script);
    const raw = c.req.query('history') ?? '0';
    if (!/^\d{1,5}$/.test(raw)) throw new LedgeError(400, 10021, 'history must be a number of lines from 0 to 99999');
    const follow = c.req.query('follow') !== 'false';
    const encoder = new TextEncoder();
    const history = logs.history(accountId, script, Number(raw));
    let live = false;
    let unsubscribe: (() => void) | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let unwatch: (() => void) | undefined;
    const stop = () => {
      unsubscribe?.();
      unwatch?.();
      clearInterval(heartbeat);
      history.return(undefined).catch(() => undefined);
    };
    const stream = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          // A token deleted or rolled, a member removed: the stream ends within seconds, on every node.
          unwatch = c.get('watchGrant')(() => {
            stop();
            try {
              controller.close();
            } catch {
              // already closed or cancelled
            }
          });
        },
        async pull(controller) {
          if (live) return;
          const next = await history.next();
          if (!next.done) {
            await pace.take(accountId, next.value.length);
            controller.enqueue(next.value);
            return;
          }
          // The history may come from the database: the client can have gone meanwhile.
          if (!follow || c.req.raw.signal.aborted) {
            unwatch?.();
            controller.close();
            return;
          }
          live = true;
          const send = (bytes: Uint8Array) => {
            if ((controller.desiredSize ?? 0) > -LIVE_BACKLOG_BYTES) controller.enqueue(bytes);
          };
          unsubscribe = logs.subscribe(accountId, script, (line) => send(encoder.encode(`${JSON.stringify(line)}\n`)));
          // An empty line now and then lets the server notice a client that went away.
          heartbeat = setInterval(() => send(encoder.encode('\n')), 15_000);
        },
        cancel: stop,
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
    );
    c.req.raw.signal.addEventListener('abort', stop);
    return new Response(stream, { headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' } });
  });
}
