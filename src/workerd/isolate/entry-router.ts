// The entry worker of every workerd generation: it owns the functions socket and hands each request to
// the deployed script named by its Host, `<script>.<subdomain>.<domain>`, through a service binding, so
// function traffic stays inside workerd. ROUTES maps "<script>.<subdomain>" to a binding name.
// In a front process (FRONT, see writeFrontConfig) the bindings are the scripts' backend processes, and the
// routes are re-read from ROUTES_FILE (a read-only disk service) at most every ROUTES_TTL_MS: a redeploy,
// a new script or a quarantined one changes the table without restarting the front, so no client
// connection is closed by it. A forward that fails means the backend died under the request (the watchdog
// killed it for exceeding its CPU or memory limit), so the front answers for it as Cloudflare does: 503,
// error 1102. A host listed in `quarantined` is a script that could not start: 503, error 1101. A script that
// throws answers 500 with error 1101, as on Cloudflare; that page comes from the
// script's own wrapper (error-page.ts answerExceptions), after its trace has recorded it for tail and logs.
import { cachedAssetFetch } from './asset-cache.js';
import { errorPage } from './error-page.js';

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
  /** The header the traffic port names a routed script with (contract.ts ROUTED_SCRIPT_HEADER). */
  ROUTED_HEADER: string;
  ROUTES: Record<string, string>;
  ROUTES_FILE?: Fetcher;
  FRONT?: boolean;
  /** The bindings whose target is a version's assets-only service: small files are kept (asset-cache.ts). */
  ASSET_CACHE?: string[];
  [binding: string]: unknown;
}

let table: Table | undefined;
let readAt = -Infinity;
let readStarted = -Infinity;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const host = (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${env.DOMAIN}`;
    const prefix = host.endsWith(suffix) ? host.slice(0, -suffix.length) : '';
    const { routes, quarantined } = env.ROUTES_FILE ? await currentTable(env) : { routes: env.ROUTES, quarantined: {} };
    // A request from a Workers route or Custom Domain names its script's key (secret, see script.ts
    // routedScriptKey) and keeps the Host the client sent, which the script sees as on Cloudflare.
    const routedKey = request.headers.get(env.ROUTED_HEADER);
    const key = routedKey ?? prefix;
    // Own keys only: a Host of constructor.<domain> or __proto__.<domain> must not find Object.prototype's.
    const binding = Object.hasOwn(routes, key) ? routes[key] : undefined;
    const target = binding === undefined ? undefined : (env[binding] as Fetcher | undefined);
    if (binding === undefined || target === undefined) {
      if (Object.hasOwn(quarantined, key)) return errorPage(request, host, 'cannot-start');
      return new Response(
        `No function is deployed at ${host || '(no Host header)'}. Functions answer at <script>.<subdomain>.${env.DOMAIN}.\n`,
        {
          status: 404,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        },
      );
    }
    // A front forwards it to the script's own process, whose router reads the header again.
    // Its URL has the scheme the client used: the traffic port's TLS listener says so in X-Forwarded-Proto,
    // which it always sets (a client's own is replaced), and only a routed request comes from it.
    if (routedKey !== null && !env.FRONT) {
      const overTls = request.headers.get('x-forwarded-proto') === 'https';
      request = new Request(overTls ? request.url.replace(/^http:/, 'https:') : request.url, request);
      request.headers.delete(env.ROUTED_HEADER);
    }
    try {
      if (env.ASSET_CACHE?.includes(binding)) return await cachedAssetFetch(binding, target, request);
      return await target.fetch(request);
    } catch {
      return errorPage(request, host, env.FRONT ? 'limits' : 'threw');
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
