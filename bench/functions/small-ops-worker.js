/* global URL, Response, Headers */
// The spec's tutorial function (test/workers/fixtures/tutorial/stage-2-with-authorization.js) with two more
// reads for the small-request benchmark (bench/functions/tail-cost.ts --scenario head_1k|list_small):
// GET /__head/<key> answers what head() returns as headers (wrk cannot time HEAD answers that declare a
// length), GET /__list/<prefix> lists up to 10 keys under the prefix with their http metadata.
const ALLOW_LIST = ['cat-pic.jpg'];

const hasValidHeader = (request, env) => request.headers.get('X-Custom-Auth-Key') === env.AUTH_KEY_SECRET;

function authorizeRequest(request, env, key) {
  switch (request.method) {
    case 'PUT':
    case 'DELETE':
      return hasValidHeader(request, env);
    case 'GET':
      return ALLOW_LIST.includes(key) || key.startsWith('__head/') || key.startsWith('__list/');
    default:
      return false;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = decodeURIComponent(url.pathname.slice(1));
    if (!authorizeRequest(request, env, key)) return new Response('Forbidden', { status: 403 });
    if (request.method === 'GET' && key.startsWith('__head/')) {
      const object = await env.MY_BUCKET.head(key.slice('__head/'.length));
      if (object === null) return new Response('Object Not Found', { status: 404 });
      const headers = new Headers();
      object.writeHttpMetadata(headers);
      headers.set('etag', object.httpEtag);
      headers.set('x-size', String(object.size));
      return new Response(null, { headers });
    }
    if (request.method === 'GET' && key.startsWith('__list/')) {
      const listed = await env.MY_BUCKET.list({
        prefix: key.slice('__list/'.length),
        limit: 10,
        include: ['httpMetadata'],
      });
      return Response.json(listed.objects.map((o) => ({ key: o.key, size: o.size, etag: o.httpEtag })));
    }
    switch (request.method) {
      case 'PUT':
        await env.MY_BUCKET.put(key, request.body);
        return new Response(`Put ${key} successfully!`);
      case 'GET': {
        const object = await env.MY_BUCKET.get(key);
        if (object === null) return new Response('Object Not Found', { status: 404 });
        const headers = new Headers();
        object.writeHttpMetadata(headers);
        headers.set('etag', object.httpEtag);
        return new Response(object.body, { headers });
      }
      case 'DELETE':
        await env.MY_BUCKET.delete(key);
        return new Response('Deleted!');
      default:
        return new Response('Method Not Allowed', { status: 405, headers: { Allow: 'PUT, GET, DELETE' } });
    }
  },
};
