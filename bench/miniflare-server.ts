// A benchmark's function on Miniflare (npm `miniflare`, what `wrangler dev` runs), its bindings' data persisted to
// disk, on 127.0.0.1:<port>. Prints "ready" once it listens (and, with a seed module, once it is seeded).
// Usage: node bench/miniflare-server.ts <port> <persist dir> <script.js> <bindings as JSON> [<seed module>]
// where the bindings are Miniflare 5's `env` (e.g. {"KV":{"type":"kv","id":"bench"}}) and the seed module exports
// `seedMiniflare(mf)`.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Miniflare } from 'miniflare';

const [port, persistDir, scriptPath, bindings, seedModule] = process.argv.slice(2);
// Miniflare 5 (the version wrangler 4.16x ships) takes one `config` per worker, like wrangler.json.
const mf = new Miniflare({
  host: '127.0.0.1',
  port: Number(port),
  resourcePersistencePath: persistDir,
  workers: [
    {
      config: {
        name: 'bench',
        compatibilityDate: '2025-01-01',
        manifest: {
          mainModule: 'index.js',
          modules: { 'index.js': { type: 'esm', contents: readFileSync(scriptPath!, 'utf8') } },
        },
        env: JSON.parse(bindings!),
      },
    },
  ],
});
await mf.ready;
if (seedModule) {
  const { seedMiniflare } = (await import(pathToFileURL(seedModule).href)) as {
    seedMiniflare(mf: Miniflare): Promise<void>;
  };
  await seedMiniflare(mf);
}
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0));
});
