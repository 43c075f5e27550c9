import { METRICS_HEADER, R2_INVALIDATE_HEADER, R2_INVALIDATE_PATH, SCHEDULED_HEADER } from './contract.js';

/**
 * The ping service of a process that runs functions: `/` answers the watchdog at once; `/metrics` asks
 * every routed script (SCRIPTS: binding name -> account and script) for its counts and answers them
 * as one JSON array (a script that failed to answer is left out);
 * `/scheduled?a=&s=&cron=&time=` has a script's wrapper run its scheduled() handler. SECRET is the
 * generation's metrics secret (a text binding).
 */
interface Env {
  SECRET: string;
  SCRIPTS?: Record<string, { a: string; s: string }>;
  /** Binding name -> account and script, for each script's Workflows engine (config/bindings/workflow.ts). */
  WORKFLOW_ENGINES?: Record<string, { a: string; s: string }>;
  [binding: string]: unknown;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const scripts = env.SCRIPTS ?? {};
    const script = (binding: string) => env[binding] as Fetcher;
    if (url.pathname === '/scheduled') {
      // A Cron Trigger (cron-service.ts): runs the script's scheduled() handler, answers its outcome.
      const q = url.searchParams;
      const binding = Object.keys(scripts).find((b) => scripts[b]!.a === q.get('a') && scripts[b]!.s === q.get('s'));
      if (!binding) return Response.json({ outcome: 'not_loaded' }, { status: 404 });
      const headers = {
        [METRICS_HEADER]: env.SECRET,
        [SCHEDULED_HEADER]: JSON.stringify({ cron: q.get('cron') ?? '', time: Number(q.get('time')) }),
      };
      try {
        return Response.json(
          await (await script(binding).fetch('http://scheduled/', { method: 'POST', headers })).json(),
        );
      } catch (error) {
        return Response.json({ outcome: 'error', error: String((error as Error | null)?.message ?? error) });
      }
    }
    if (url.pathname.startsWith('/workflows/')) {
      // The Ledge server's calls to a script's Workflows engine (`/workflows/<call>?a=&s=&workflow=...`).
      const engines = env.WORKFLOW_ENGINES ?? {};
      const q = url.searchParams;
      const binding = Object.keys(engines).find((b) => engines[b]!.a === q.get('a') && engines[b]!.s === q.get('s'));
      if (!binding) return Response.json({ error: { code: 'not_loaded', message: 'not loaded' } }, { status: 404 });
      const target = `http://workflows${url.pathname.slice('/workflows'.length)}${url.search}`;
      return (env[binding] as Fetcher).fetch(target, { method: request.method, body: request.body });
    }
    if (url.pathname === R2_INVALIDATE_PATH) {
      // Cached R2 objects changed (r2-invalidation.ts): every script of this process drops them before the answer.
      const body = await request.text();
      const headers = { [METRICS_HEADER]: env.SECRET, [R2_INVALIDATE_HEADER]: '1' };
      await Promise.allSettled(
        Object.keys(scripts).map(async (binding) => {
          const response = await script(binding).fetch('http://r2-invalidate/', { method: 'POST', headers, body });
          await response.body?.cancel();
        }),
      );
      // A script whose handlers the metrics module does not wrap never caches (r2-cache.ts enableCache) and
      // cannot answer; the others have applied it once their answer is in.
      return new Response(null, { status: 204 });
    }
    if (url.pathname !== '/metrics') return new Response(null, { status: 204 });
    const out = [];
    for (const [binding, id] of Object.entries(scripts)) {
      try {
        const response = await script(binding).fetch('http://metrics/', { headers: { [METRICS_HEADER]: env.SECRET } });
        if (response.ok && response.headers.get('content-type') === 'application/json')
          out.push({ ...id, ...(await response.json<object>()) });
      } catch {
        // A script that failed (its wrapper answers even without a fetch handler: isolate/metrics.ts) is left out.
      }
    }
    return Response.json(out);
  },
};
