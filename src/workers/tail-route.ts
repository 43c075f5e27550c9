import type { Hono } from 'hono';
import type { AppEnv } from '../api/context.ts';
import { LedgeError } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';
import type { FunctionLogHub } from './runtime/log-hub.ts';
import type { WorkersService } from './service.ts';

/**
 * `GET .../scripts/{script}/tail?history=N`: a Ledge extension that streams a function's console output
 * as NDJSON (the last N kept lines first, then live lines) until the client disconnects.
 * Cloudflare's own tail is a WebSocket session; `ledge tail` uses this simpler stream.
 */
export function mountTailRoute(app: Hono<AppEnv>, workers: WorkersService, logs: FunctionLogHub): void {
  // What `wrangler tail` creates first: refused with a pointer to the stream below, not a bare "no route".
  app.post('/accounts/:account_id/workers/scripts/:script/tails', async (c) => {
    const script = c.req.param('script');
    await workers.requireScript(c.req.param('account_id'), script);
    throw WorkerErrors.liveTailUnsupported(script);
  });
  app.get('/accounts/:account_id/workers/scripts/:script/tail', async (c) => {
    const accountId = c.req.param('account_id');
    const script = c.req.param('script');
    await workers.requireScript(accountId, script);
    const raw = c.req.query('history') ?? '0';
    if (!/^\d{1,5}$/.test(raw)) throw new LedgeError(400, 10021, 'history must be a number of lines from 0 to 99999');
    const encoder = new TextEncoder();
    let unsubscribe: (() => void) | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const line of logs.recent(accountId, script, Number(raw)))
          controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`));
        unsubscribe = logs.subscribe(accountId, script, (line) =>
          controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`)),
        );
        // An empty line now and then lets the server notice a client that went away.
        heartbeat = setInterval(() => controller.enqueue(encoder.encode('\n')), 15_000);
      },
      cancel() {
        unsubscribe?.();
        clearInterval(heartbeat);
      },
    });
    c.req.raw.signal.addEventListener('abort', () => {
      unsubscribe?.();
      clearInterval(heartbeat);
    });
    return new Response(stream, { headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' } });
  });
}
