// The queues benchmark's Worker on Miniflare (what `wrangler dev` runs): producer and consumer of one queue with
// batches of one, KV for the results, on 127.0.0.1:<port>. Prints "ready" once it listens.
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
        name: 'queues-bench',
        compatibilityDate: '2025-01-01',
        manifest: {
          mainModule: 'index.js',
          modules: { 'index.js': { type: 'esm', contents: readFileSync(scriptPath!, 'utf8') } },
        },
        env: { RESULTS: { type: 'kv', id: 'results' }, Q: { type: 'queue', name: 'bench' } },
        triggers: [{ type: 'queue', name: 'bench', maxBatchSize: 1, maxBatchTimeout: 0 }],
      },
    },
  ],
});
await mf.ready;
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0));
});
