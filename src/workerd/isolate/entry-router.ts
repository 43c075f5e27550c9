// The entry worker of every workerd generation: it owns the functions socket and hands each request to
// the deployed script named by its Host, `<script>.<subdomain>.<domain>`, through a service binding, so
// function traffic stays inside workerd. ROUTES maps "<script>.<subdomain>" to a binding name.
// In a front process (FRONT, see writeFrontConfig) the bindings are the scripts' backend processes, and the
// routes are re-read from ROUTES_FILE (a read-only disk service) at most every ROUTES_TTL_MS: a redeploy,
// a new script or a quarantined one changes the table without restarting the front, so no client
// connection is closed by it. A forward that fails means the backend died under the request (the watchdog
// killed it for exceeding its CPU or memory limit), so the front answers for it as Cloudflare does: 503,
// error 1102. A host listed in `quarantined` is a script that could not start: 503, error 1101.
const ROUTES_TTL_MS = 100;
/** While another request reads the table, one this much past its TTL is still used (the read is on its way). */
const READ_GRACE_MS = 50;

/** `<script>.<subdomain>` -> binding, and the hosts of quarantined scripts (config/write.ts FrontRoutes). */
interface Table {
  routes: Record<string, string>;
  quarantined: Record<string, true>;
}
interface Env {
  DOMAIN: string;
  ROUTES: Record<string, string>;
  ROUTES_FILE?: Fetcher;
  FRONT?: boolean;
  [binding: string]: unknown;
}
type ErrorCode = 1101 | 1102;

let table: Table | undefined;
let readAt = -Infinity;
let readStarted = -Infinity;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const host = (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${env.DOMAIN}`;
    const prefix = host.endsWith(suffix) ? host.slice(0, -suffix.length) : '';
    const { routes, quarantined } = env.ROUTES_FILE ? await currentTable(env) : { routes: env.ROUTES, quarantined: {} };
    // Own keys only: a Host of constructor.<domain> or __proto__.<domain> must not find Object.prototype's.
    const binding = Object.hasOwn(routes, prefix) ? routes[prefix] : undefined;
    const target = binding === undefined ? undefined : (env[binding] as Fetcher | undefined);
    if (target === undefined) {
      if (Object.hasOwn(quarantined, prefix)) return errorPage(request, host, 1101);
      return new Response(
        `No function is deployed at ${host || '(no Host header)'}. Functions answer at <script>.<subdomain>.${env.DOMAIN}.\n`,
        {
          status: 404,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        },
      );
    }
    if (!env.FRONT) return target.fetch(request);
    try {
      return await target.fetch(request);
    } catch {
      return errorPage(request, host, 1102);
    }
  },
};

/**
 * The routing table, re-read when older than ROUTES_TTL_MS. workerd ties I/O to the request that started it,
 * so requests cannot share one read: a request that finds the table stale reads it itself, unless another
 * read started just now, in which case the table (at most ROUTES_TTL_MS + READ_GRACE_MS old) is used. The
 * runtime retires a replaced script's process only after longer than that (ROUTE_SETTLE_MS).
 */
async function currentTable(env: Env): Promise<Table> {
  const now = Date.now();
  const fresh = now - readAt < ROUTES_TTL_MS;
  const readingNow = now - readStarted < READ_GRACE_MS && now - readAt < ROUTES_TTL_MS + READ_GRACE_MS;
  if (table === undefined || (!fresh && !readingNow)) await readTable(env);
  return table ?? { routes: env.ROUTES, quarantined: {} };
}

async function readTable(env: Env): Promise<void> {
  const started = Date.now();
  readStarted = started;
  try {
    const answer = await env.ROUTES_FILE!.fetch('http://routes/routes.json');
    if (answer.ok) {
      table = await answer.json<Table>();
      readAt = Math.max(readAt, started);
    } else await answer.body?.cancel();
  } catch {
    // Keep the last table: the file is replaced atomically, so a failed read is transient.
  }
}

const ERRORS: Record<ErrorCode, { title: string; text: string }> = {
  1101: {
    title: 'Worker threw exception',
    text: 'This function could not start: its code throws or does not finish while it loads. If you own it, run `ledge scripts` to see the reason, then deploy a fixed version or delete it.',
  },
  1102: {
    title: 'Worker exceeded resource limits',
    text: 'This function exceeded its CPU time limit or its memory limit, and its invocation was stopped. If you own this function, look for an unbounded loop or allocation, or raise <code>limits.cpu_ms</code> in its wrangler configuration.',
  },
};

/** Cloudflare's answer: a short HTML error page for browsers, `error code: N` for other clients. */
function errorPage(request: Request, host: string, code: ErrorCode): Response {
  const headers = { 'cache-control': 'no-store' };
  if (!(request.headers.get('accept') ?? '').includes('text/html')) {
    return new Response(`error code: ${code}`, {
      status: 503,
      headers: { ...headers, 'content-type': 'text/plain; charset=UTF-8' },
    });
  }
  const { title, text } = ERRORS[code];
  const page = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title} | ${escapeHtml(host)} | Ledge</title></head>
<body>
<h1>Error ${code}</h1>
<h2>${title}</h2>
<p>${text}</p>
</body>
</html>
`;
  return new Response(page, { status: 503, headers: { ...headers, 'content-type': 'text/html; charset=UTF-8' } });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
