import type { Miniflare } from 'miniflare';

/** The rows every platform's database holds before the runs: 1,000 items, selected by id. */
export const ROWS = 1000;
export const SCHEMA = 'CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER)';
export const SEED = Array.from(
  { length: ROWS / 100 },
  (_, chunk) =>
    `INSERT INTO items (name, qty) VALUES ${Array.from({ length: 100 }, (_, i) => `('item-${chunk * 100 + i}', ${i})`).join(', ')}`,
);

/** The same rows in Miniflare's database (bench/miniflare-server.ts runs this after it starts). */
export async function seedMiniflare(mf: Miniflare): Promise<void> {
  const db = await mf.getD1Database('DB');
  await db.exec(SCHEMA);
  await db.batch(SEED.map((sql) => db.prepare(sql)));
}
