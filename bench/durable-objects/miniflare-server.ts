// The benchmark's function on Miniflare (what `wrangler dev` runs), its objects persisted to disk, on
// 127.0.0.1:<port>. Prints "ready" once it listens.
import { readFileSync } from 'node:fs';
import { Miniflare } from 'miniflare';

const [port, persistDir, scriptPath] = process.argv.slice(2);
const mf = new Miniflare({
  host: '127.0.0.1',
  port: Number(port),
  resourcePersistencePath: persistDir,
  workers: [
    {
      config: {
        name: 'do-bench',
        compatibilityDate: '2025-04-01',
        manifest: {
          mainModule: 'index.js',
          modules: { 'index.js': { type: 'esm', contents: readFileSync(scriptPath!, 'utf8') } },
        },
        exports: { Counter: { type: 'durable-object', storage: 'sqlite' } },
        env: { COUNTER: { type: 'durable-object', worker: 'do-bench', exportName: 'Counter' } },
      },
    },
  ],
});
await mf.ready;
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0));
});
