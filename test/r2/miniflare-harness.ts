import { readFileSync } from 'node:fs';
import { Miniflare } from 'miniflare';

export interface RunningMiniflare {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * Runs a worker on Miniflare (real workerd with Miniflare's own R2 simulator) with an in-memory `BUCKET`
 * R2 binding: the reference Ledge's binding is compared with where R2's documentation is silent.
 */
export async function startMiniflare(scriptPath: string): Promise<RunningMiniflare> {
  const mf = new Miniflare({
    workers: [
      {
        config: {
          name: 'fidelity',
          compatibilityDate: '2025-01-01',
          manifest: {
            mainModule: 'worker.js',
            modules: { 'worker.js': { type: 'esm', contents: readFileSync(scriptPath, 'utf8') } },
          },
          env: { BUCKET: { type: 'r2', name: 'fidelity' } },
        },
      },
    ],
  });
  await mf.ready;
  return {
    fetch: async (path, init) =>
      (await mf.dispatchFetch(`http://localhost/${path}`, init as never)) as unknown as Response,
    stop: () => mf.dispose(),
  };
}
