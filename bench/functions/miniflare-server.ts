// Runs the tutorial function on Miniflare (npm `miniflare`, what `wrangler dev` uses) for the benchmark:
// R2 persisted to disk, the same secret, on 127.0.0.1:<port>. Prints "ready" once it listens.
import { readFileSync } from 'node:fs';
import { Miniflare } from 'miniflare';

const [port, persistDir, secret, scriptPath] = process.argv.slice(2);
// Miniflare 5 (the version wrangler 4.16x ships) takes one `config` per worker, like wrangler.json.
const mf = new Miniflare({
  host: '127.0.0.1',
  port: Number(port),
  resourcePersistencePath: persistDir,
  workers: [
    {
      config: {
        name: 'r2-worker',
        compatibilityDate: '2025-01-01',
        manifest: {
          mainModule: 'index.js',
          modules: { 'index.js': { type: 'esm', contents: readFileSync(scriptPath!, 'utf8') } },
        },
        env: { MY_BUCKET: { type: 'r2', name: 'my-bucket' }, AUTH_KEY_SECRET: { type: 'text', value: secret! } },
      },
    },
  ],
});
await mf.ready;
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0));
});
