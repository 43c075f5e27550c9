/* global URL, Response */
// The benchmark's function: GET answers the hot key, PUT writes the body under the path's key.
export default {
  async fetch(request, env) {
    if (request.method === 'PUT') {
      await env.KV.put(new URL(request.url).pathname.slice(1), await request.text());
      return new Response('ok');
    }
    return new Response(await env.KV.get('hot'));
  },
};
