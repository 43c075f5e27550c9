import type { TestLedge } from '../../helpers/ledge.ts';
import { accountSubdomain, enableWorkersDev, functionsPort, uploadScript } from '../helpers.ts';

/**
 * A Worker with two Durable Object classes: `Counter` (key-value storage, RPC) and `Room` (SQLite storage,
 * alarms, WebSockets with the hibernation API), and a front that reaches them by path.
 */
export const OBJECTS_WORKER = `
import { DurableObject } from 'cloudflare:workers';

export class Counter extends DurableObject {
  hits = 0;
  /** Who answers: each live instance of the object has its own. */
  self = crypto.randomUUID();
  holding = 0;
  instance() {
    return ++this.hits;
  }
  whoami() {
    return { self: this.self, holding: this.holding };
  }
  async hold(ms) {
    this.holding++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.holding--;
    return this.self;
  }
  async increment() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return n;
  }
  async fetch() {
    return new Response(String(await this.increment()));
  }
  async fill(bytes, key) {
    try {
      if (key) await this.ctx.storage.put('k'.repeat(bytes), 1);
      else await this.ctx.storage.put('big', 'x'.repeat(bytes));
      return 'stored';
    } catch (error) {
      return 'refused: ' + error.message;
    }
  }
  spin() {
    for (;;) {}
  }
  envKeys() {
    return Object.keys(this.env).sort();
  }
}

export class Room extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  }
  add(text) {
    this.ctx.storage.sql.exec('INSERT INTO messages (text) VALUES (?)', text);
    return this.ctx.storage.sql.exec('SELECT COUNT(*) AS n FROM messages').one().n;
  }
  fill(bytes) {
    try {
      this.add('x'.repeat(bytes));
      return 'stored';
    } catch (error) {
      return 'refused: ' + error.message;
    }
  }
  messages() {
    return this.ctx.storage.sql.exec('SELECT text FROM messages ORDER BY id').toArray().map((r) => r.text);
  }
  async alarmIn(text, ms) {
    await this.ctx.storage.put('alarm-text', text);
    await this.ctx.storage.setAlarm(Date.now() + ms);
    return 'scheduled';
  }
  async alarm() {
    this.add(await this.ctx.storage.get('alarm-text'));
  }
  async fetch(request) {
    if (request.headers.get('upgrade') !== 'websocket') return new Response('expected a WebSocket', { status: 426 });
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  webSocketMessage(ws, message) {
    this.add(String(message));
    for (const other of this.ctx.getWebSockets()) other.send(String(message));
  }
  webSocketClose(ws, code) {
    ws.close(code, 'bye');
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, kind, name, action] = url.pathname.split('/');
    if (kind === 'counter') return new Response(String(await env.COUNTER.getByName(name).increment()));
    if (kind === 'instance') return new Response(String(await env.COUNTER.getByName(name).instance()));
    if (kind === 'whoami') return Response.json(await env.COUNTER.getByName(name).whoami());
    if (kind === 'hold') return new Response(await env.COUNTER.getByName(name).hold(Number(url.searchParams.get('ms'))));
    if (kind === 'counter-fetch') return env.COUNTER.get(env.COUNTER.idFromName(name)).fetch(request);
    if (kind === 'fill') return new Response(await env.COUNTER.getByName(name).fill(Number(url.searchParams.get('bytes')), url.searchParams.has('key')));
    if (kind === 'env')
      return Response.json({ handler: Object.keys(env).sort(), object: await env.COUNTER.getByName(name).envKeys() });
    if (kind === 'spin') return new Response(await env.COUNTER.getByName(name).spin());
    if (kind === 'ids') {
      const named = env.COUNTER.idFromName(name);
      const unique = env.COUNTER.newUniqueId();
      const again = env.COUNTER.idFromString(named.toString());
      return Response.json({ named: named.toString(), unique: unique.toString(), same: again.equals(named) });
    }
    if (kind === 'unique') {
      const id = env.COUNTER.newUniqueId();
      const first = await env.COUNTER.get(id).increment();
      const second = await env.COUNTER.get(env.COUNTER.idFromString(id.toString())).increment();
      return Response.json({ first, second });
    }
    if (kind === 'room') {
      const room = env.ROOM.getByName(name);
      if (action === 'add') return new Response(String(await room.add(url.searchParams.get('text'))));
      if (action === 'messages') return Response.json(await room.messages());
      if (action === 'fill') return new Response(await room.fill(Number(url.searchParams.get('bytes'))));
      if (action === 'alarm')
        return new Response(await room.alarmIn(url.searchParams.get('text'), Number(url.searchParams.get('in') ?? 0)));
      if (action === 'ws') return room.fetch(request);
    }
    return new Response('not found', { status: 404 });
  },
};
`;

export const OBJECT_BINDINGS = [
  { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' },
  { type: 'durable_object_namespace', name: 'ROOM', class_name: 'Room' },
];

export const FIRST_MIGRATION = {
  new_tag: 'v1',
  steps: [{ new_classes: ['Counter'], new_sqlite_classes: ['Room'] }],
};

/** Uploads the objects Worker through the API as wrangler would, with the given bindings and migrations. */
export async function uploadObjects(
  ledge: TestLedge,
  name: string,
  metadata: { bindings?: unknown[]; migrations?: unknown; limits?: unknown } = {},
  source = OBJECTS_WORKER,
) {
  return uploadScript(ledge, name, {
    modules: { 'index.js': source },
    metadata: { bindings: OBJECT_BINDINGS, compatibility_date: '2025-04-01', ...metadata },
  });
}

/** The Worker's host on the functions port, once routed on workers.dev. */
export async function routeObjects(ledge: TestLedge, name: string): Promise<{ port: number; host: string }> {
  await enableWorkersDev(ledge, name);
  return { port: functionsPort(ledge), host: `${name}.${await accountSubdomain(ledge)}.localhost` };
}
