/* global URL, Response */
// The function every platform of the D1 benchmark runs: a point select (GET /?id=N) and an insert (any
// other method: wrk's PUT scenario).
export default {
  async fetch(request, env) {
    if (request.method !== 'GET') {
      const result = await env.DB.prepare('INSERT INTO items (name, qty) VALUES (?, ?)').bind('new', 1).run();
      return new Response(String(result.meta.last_row_id));
    }
    const id = Number(new URL(request.url).searchParams.get('id') ?? 1);
    const row = await env.DB.prepare('SELECT id, name, qty FROM items WHERE id = ?').bind(id).first();
    return Response.json(row);
  },
};
