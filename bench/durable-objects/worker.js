/* global Response */
// The benchmark's function: every request increments one counter object (a SQLite-backed class) over RPC;
// `/peek` reads it instead (a round trip with no write to wait for).
import { DurableObject } from 'cloudflare:workers';

export class Counter extends DurableObject {
  async increment() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return n;
  }
  async peek() {
    return (await this.ctx.storage.get('n')) ?? 0;
  }
}

export default {
  async fetch(request, env) {
    const counter = env.COUNTER.getByName('bench');
    if (request.url.endsWith('/peek')) return new Response(String(await counter.peek()));
    return new Response(String(await counter.increment()));
  },
};
