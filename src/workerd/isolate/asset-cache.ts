// Small static assets kept in the router's isolate. A request that crosses a service binding costs workerd
// about as much CPU again as the assets service's own work (benchmarks.md, "Static assets"), so the router
// answers repeated GETs of small files from memory. Only a version's assets-only service is cached: its
// directory never changes (one version per process generation), so an answer, once read, stays right for the
// life of the isolate, and no user Worker's response can be kept by mistake. Whatever could make the service
// answer differently to the same URL either keys the entry (Sec-Fetch-Mode, which `not_found_handling`
// reads) or bypasses the cache (conditional and range requests, any method but GET).

/** Files above this size are streamed from the service every time. */
export const MAX_CACHED_BYTES = 64 * 1024;
/** The bytes one isolate keeps at most; the oldest entries leave first. */
export const CACHE_BUDGET_BYTES = 8 * 1024 * 1024;

const BYPASS_HEADERS = ['range', 'if-range', 'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since'];

interface Entry {
  body: ArrayBuffer;
  headers: [string, string][];
}

const entries = new Map<string, Entry>();
let cachedBytes = 0;

/** The service's answer to `request`, from memory when it was read before. */
export async function cachedAssetFetch(binding: string, target: Fetcher, request: Request): Promise<Response> {
  if (request.method !== 'GET' || BYPASS_HEADERS.some((name) => request.headers.has(name)))
    return target.fetch(request);
  const key = `${binding} ${request.headers.get('sec-fetch-mode') ?? ''} ${request.url}`;
  const hit = entries.get(key);
  if (hit) return new Response(hit.body, { status: 200, headers: hit.headers });
  const answer = await target.fetch(request);
  const length = Number(answer.headers.get('content-length') ?? Number.NaN);
  if (
    answer.status !== 200 ||
    !(length <= MAX_CACHED_BYTES) ||
    answer.headers.has('set-cookie') ||
    answer.headers.has('vary')
  )
    return answer;
  const body = await answer.arrayBuffer();
  const headers = [...answer.headers];
  remember(key, { body, headers });
  return new Response(body, { status: 200, headers });
}

function remember(key: string, entry: Entry): void {
  if (entries.has(key)) return;
  entries.set(key, entry);
  cachedBytes += entry.body.byteLength;
  for (const [oldest, old] of entries) {
    if (cachedBytes <= CACHE_BUDGET_BYTES) break;
    entries.delete(oldest);
    cachedBytes -= old.body.byteLength;
  }
}
