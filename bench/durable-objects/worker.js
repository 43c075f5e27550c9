/* global Response */
// The benchmark's function: every request increments one counter object (a SQLite-backed class) over RPC.
import { DurableObject } from 'cloudflare:workers';

export class Counter extends DurableObject {
  async increment() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return n;
  }
}

export default {
  async fetch(request, env) {
    return new Response(String(await env.COUNTER.getByName('bench').increment()));
  },
};
