import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The spec's tutorial function, stage 2 (authorization, its secret), as every functions benchmark deploys it. */
export const TUTORIAL_SCRIPT = join(
  resolve(import.meta.dirname, '../..'),
  'test/workers/fixtures/tutorial/stage-2-with-authorization.js',
);

export interface BenchCredentials {
  email: string;
  key: string;
  account: string;
}

/** The tutorial with HEAD and list() reads added, for the small-request scenarios of tail-cost.ts. */
export const SMALL_OPS_SCRIPT = join(resolve(import.meta.dirname), 'small-ops-worker.js');

/**
 * Deploys the tutorial function (or `script`, one ES module with the same bindings) on a Ledge API (its bucket, the secret, the workers.dev route); returns the Host
 * it answers to (`r2-worker.<subdomain>.localhost`, without a port).
 */
export async function deployTutorial(
  apiPort: number,
  creds: BenchCredentials,
  secret: string,
  script = TUTORIAL_SCRIPT,
): Promise<string> {
  const base = `http://127.0.0.1:${apiPort}/client/v4/accounts/${creds.account}`;
  const headers = { 'x-auth-email': creds.email, 'x-auth-key': creds.key };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { success: boolean; result: { subdomain?: string }; errors: unknown[] };
    if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json.errors)}`);
    return json.result;
  };
  await call('POST', '/r2/buckets', { name: 'my-bucket' });
  const form = new FormData();
  form.set(
    'metadata',
    JSON.stringify({
      main_module: 'index.js',
      compatibility_date: '2025-01-01',
      bindings: [{ name: 'MY_BUCKET', type: 'r2_bucket', bucket_name: 'my-bucket' }],
    }),
  );
  form.set('index.js', new File([readFileSync(script)], 'index.js', { type: 'application/javascript+module' }));
  const upload = await fetch(`${base}/workers/scripts/r2-worker`, { method: 'PUT', headers, body: form });
  if (!upload.ok) throw new Error(`upload failed: ${await upload.text()}`);
  await call('PUT', '/workers/scripts/r2-worker/secrets', {
    name: 'AUTH_KEY_SECRET',
    text: secret,
    type: 'secret_text',
  });
  await call('POST', '/workers/scripts/r2-worker/subdomain', { enabled: true });
  const { subdomain } = await call('GET', '/workers/subdomain');
  return `r2-worker.${subdomain}.localhost`;
}
