import { describe, expect, it } from 'vitest';
import { limitStorage } from './object-limits.ts';

/**
 * The wrapper's limits on a Durable Object's state, checked on a state object shaped as workerd's (its
 * storage's put, the hibernation API's acceptWebSocket and getWebSockets): what reaches workerd and what not.
 */
function state() {
  const written: unknown[][] = [];
  const accepted: unknown[] = [];
  const ctx = {
    storage: { put: (...args: unknown[]) => written.push(args) },
    acceptWebSocket: (ws: unknown) => accepted.push(ws),
    getWebSockets: () => [...accepted],
  };
  return { ctx, written, accepted };
}

class Plain {
  readonly ctx: unknown;
  constructor(ctx: unknown) {
    this.ctx = ctx;
  }
}

const construct = (sqlite: boolean, webSockets?: number) => {
  const Limited = limitStorage(Plain, sqlite, { webSockets }) as new (ctx: unknown, env: unknown) => Plain;
  const { ctx, written, accepted } = state();
  new Limited(ctx, {});
  return { ctx, written, accepted, Limited };
};

describe('Durable Object limits in the isolate', () => {
  it('keeps the class name workerd and the user see', () => {
    expect((limitStorage(Plain, false) as { name: string }).name).toBe('Plain');
    expect(limitStorage(undefined, false)).toBeUndefined();
  });

  it('passes keys up to 2 KiB and values up to 128 KiB (2 MiB with SQLite), refuses more before writing', () => {
    const kv = construct(false);
    kv.ctx.storage.put('k'.repeat(2048), 'v'.repeat(131_072));
    expect(kv.written).toHaveLength(1);
    expect(() => kv.ctx.storage.put('k'.repeat(2049), 1)).toThrow('Keys cannot be larger than 2048 bytes');
    expect(() => kv.ctx.storage.put('k', 'é'.repeat(65_537))).toThrow('Values cannot be larger than 131072 bytes');
    expect(() => kv.ctx.storage.put('k', new Uint8Array(131_073))).toThrow('A value of size 131073');
    expect(() => kv.ctx.storage.put({ a: 1, b: 'x'.repeat(131_073) })).toThrow('Values cannot be larger');
    expect(kv.written).toHaveLength(1);
    const sql = construct(true);
    sql.ctx.storage.put('k', 'v'.repeat(2 * 1024 * 1024));
    expect(() => sql.ctx.storage.put('k', 'v'.repeat(2 * 1024 * 1024 + 1))).toThrow('2097152 bytes');
  });

  it('refuses a put of more than 128 entries', () => {
    const kv = construct(false);
    const entries = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    expect(() => kv.ctx.storage.put(entries)).toThrow('at most 128 keys');
    expect(kv.written).toHaveLength(0);
  });

  it('accepts WebSockets up to the limit and refuses the next', () => {
    const { ctx, accepted } = construct(false, 2);
    ctx.acceptWebSocket('a');
    ctx.acceptWebSocket('b');
    expect(() => ctx.acceptWebSocket('c')).toThrow('at most 2 WebSockets');
    expect(accepted).toEqual(['a', 'b']);
  });

  it('refuses writes to a SQLite-backed object once it holds its limit, and still runs reads and deletes', () => {
    const ran: string[] = [];
    const sql = { databaseSize: 1000, exec: (query: string) => ran.push(query) };
    const ctx = {
      storage: { sql, put: () => ran.push('put') },
      acceptWebSocket: () => undefined,
      getWebSockets: () => [],
    };
    const Limited = limitStorage(Plain, true, { storageBytes: 1000 }) as new (ctx: unknown, env: unknown) => Plain;
    new Limited(ctx, {});
    expect(() => sql.exec('INSERT INTO t VALUES (1)')).toThrow('database or disk is full: SQLITE_FULL');
    expect(() => ctx.storage.put()).toThrow('SQLITE_FULL');
    sql.exec('SELECT * FROM t');
    sql.exec('  delete FROM t');
    expect(ran).toEqual(['SELECT * FROM t', '  delete FROM t']);
    sql.databaseSize = 999;
    sql.exec('INSERT INTO t VALUES (2)');
    expect(ran.at(-1)).toBe('INSERT INTO t VALUES (2)');
  });
});
