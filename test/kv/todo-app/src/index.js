/* global Response, URL, crypto */
// Each to-do is one key, `todo:<time>-<random>` (so a list comes back oldest first), with its title as the value
// and { title, done } as the key's metadata: one `list` call gives the whole list.
const PREFIX = 'todo:';
const MAX_TITLE = 200;

const json = (body, status = 200) => Response.json(body, { status });

async function listTodos(env) {
  const todos = [];
  let cursor;
  do {
    const page = await env.TODOS.list({ prefix: PREFIX, cursor });
    for (const key of page.keys) todos.push({ id: key.name.slice(PREFIX.length), ...key.metadata });
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return todos;
}

async function readTitle(request) {
  const body = await request.json().catch(() => null);
  const title = typeof body?.title === 'string' ? body.title.trim() : '';
  if (!title || title.length > MAX_TITLE) return null;
  return title;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, api, collection, id] = url.pathname.split('/');
    if (api !== 'api' || collection !== 'todos') return json({ error: 'not found' }, 404);

    if (!id && request.method === 'GET') return json(await listTodos(env));
    if (!id && request.method === 'POST') {
      const title = await readTitle(request);
      if (!title) return json({ error: `a title of 1 to ${MAX_TITLE} characters` }, 400);
      const newId = `${Date.now().toString(36).padStart(10, '0')}-${crypto.randomUUID().slice(0, 8)}`;
      await env.TODOS.put(PREFIX + newId, title, { metadata: { title, done: false } });
      return json({ id: newId, title, done: false }, 201);
    }
    if (!id) return json({ error: 'method not allowed' }, 405);

    const key = PREFIX + decodeURIComponent(id);
    if (request.method === 'PATCH') {
      const { value: title, metadata } = await env.TODOS.getWithMetadata(key);
      if (title === null) return json({ error: 'no such to-do' }, 404);
      const body = await request.json().catch(() => null);
      const done = body?.done === true;
      await env.TODOS.put(key, title, { metadata: { ...metadata, title, done } });
      return json({ id, title, done });
    }
    if (request.method === 'DELETE') {
      await env.TODOS.delete(key);
      return new Response(null, { status: 204 });
    }
    return json({ error: 'method not allowed' }, 405);
  },
};
