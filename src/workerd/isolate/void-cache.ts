// The Cache API's backend (workerd's `cacheApiOutbound`) for every Worker: it keeps nothing, as Cloudflare's
// cache behaves on *.workers.dev ("operations ... will have no impact"): `match()` misses, `put()` succeeds and
// stores nothing, `delete()` finds nothing. Without a backend workerd throws "No Cache was configured" at the
// first `caches.default` call, which frameworks (SvelteKit's Cloudflare adapter, for one) make on every request.

export default {
  async fetch(request: Request): Promise<Response> {
    switch (request.method) {
      case 'GET':
        return new Response(null, { status: 504, headers: { 'cf-cache-status': 'MISS' } });
      case 'PUT':
        // The serialised response is read to its end so the Worker's put() completes as on Cloudflare.
        await request.body?.pipeTo(new WritableStream());
        return new Response(null, { status: 204 });
      default:
        // PURGE (delete()): nothing was kept, so nothing is deleted.
        return new Response(null, { status: 404 });
    }
  },
};
