// The D1 benchmark's function on Miniflare (what `wrangler dev` runs), its database persisted to disk.
// Prints "ready" once it listens.
import { readFileSync } from 'node:fs';
import { Miniflare } from 'miniflare';
import { SCHEMA, SEED } from './seed.ts';

const [port, persistDir, scriptPath] = process.argv.slice(2);
const mf = new Miniflare({
  host: '127.0.0.1',
  port: Number(port),
  resourcePersistencePath: persistDir,
  workers: [
    {
      config: {
        name: 'd1-bench',
        compatibilityDate: '2025-01-01',
        manifest: {
          mainModule: 'index.js',
          modules: { 'index.js': { type: 'esm', contents: readFileSync(scriptPath!, 'utf8') } },
        },
        env: { DB: { type: 'd1', id: 'bench-db' } },
      },
    },
  ],
});
await mf.ready;
const db = await mf.getD1Database('DB');
await db.exec(SCHEMA);
await db.batch(SEED.map((sql) => db.prepare(sql)));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0));
});
