import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, REPO_ROOT, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from './helpers.ts';

const WRANGLER = join(REPO_ROOT, 'node_modules/wrangler/bin/wrangler.js');
const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (request.method === 'PUT') { await env.MY_BUCKET.put(url.pathname.slice(1), request.body); return new Response('stored'); }
    const obj = await env.MY_BUCKET.get(url.pathname.slice(1));
    return new Response((obj ? await obj.text() : 'none') + ' / ' + (env.AUTH_KEY_SECRET ?? 'no secret') + ' / ' + (env.GREETING ?? ''));
  },
};
`;

/** The real wrangler 4 CLI against `ledge server`: whoami, r2 bucket create/list, secret put, deploy. */
describe('wrangler against Ledge', () => {
  let ledge: TestLedge;
  let project: string;
  let home: string;

  const wrangler = (args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [WRANGLER, ...args],
        {
          cwd: project,
          timeout: 60_000,
          env: {
            ...cleanEnv(),
            HOME: home,
            XDG_CONFIG_HOME: join(home, '.config'),
            XDG_CACHE_HOME: join(home, '.cache'),
            CLOUDFLARE_API_BASE_URL: ledge.apiUrl,
            CLOUDFLARE_API_TOKEN: ledge.apiToken,
            CLOUDFLARE_ACCOUNT_ID: ledge.accountId,
            WRANGLER_SEND_METRICS: 'false',
            WRANGLER_HIDE_BANNER: 'true',
            CI: 'true',
            NO_COLOR: '1',
          },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(input);
    });

  beforeAll(async () => {
    ledge = await startLedge();
    home = tempDir('ledge-wrangler-home-');
    project = tempDir('ledge-wrangler-project-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), WORKER);
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "my-worker"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n\n[vars]\nGREETING = "hi"\n\n[[r2_buckets]]\nbinding = "MY_BUCKET"\nbucket_name = "my-bucket"\n`,
    );
  });
  afterAll(async () => ledge?.close());

  it('wrangler whoami shows the account', async () => {
    const result = await wrangler(['whoami']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(ledge.accountId);
    expect(result.stdout).toContain(ledge.email);
  });

  it('wrangler r2 bucket create and list', async () => {
    const created = await wrangler(['r2', 'bucket', 'create', 'my-bucket']);
    expect(created.code, created.stderr + created.stdout).toBe(0);
    const listed = await wrangler(['r2', 'bucket', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('my-bucket');
  });

  it('wrangler secret put creates the script placeholder and stores the secret', async () => {
    const result = await wrangler(['secret', 'put', 'AUTH_KEY_SECRET'], 's3cr3t-value\n');
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const secrets = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/my-worker/secrets`, {
      headers: ledge.tokenHeaders,
    });
    expect(((await secrets.json()) as { result: unknown }).result).toEqual([
      { name: 'AUTH_KEY_SECRET', type: 'secret_text' },
    ]);
  });

  it('wrangler deploy updates the existing script, and the function answers with bucket, secret and var', async () => {
    const result = await wrangler(['deploy']);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const host = `my-worker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/k', { method: 'PUT', body: 'v' })).text).toBe('stored');
    expect((await callFunction(functionsPort(ledge), host, '/k')).text).toBe('v / s3cr3t-value / hi');
  });

  it('wrangler deploy creates a new script', async () => {
    const result = await wrangler(['deploy', '--name', 'fresh-worker']);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const host = `fresh-worker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/k')).text).toBe('v / no secret / hi');
  });

  it('wrangler dev --remote fails fast with a message that names ledge deploy', async () => {
    const started = Date.now();
    // Ports 0: a developer's 8787/9229 or another test's server must not matter.
    const result = await wrangler(['dev', '--remote', '--port', '0', '--inspector-port', '0']);
    expect(result.code).not.toBe(0);
    const output = result.stdout + result.stderr;
    expect(output).toContain('Ledge does not offer remote previews (wrangler dev --remote)');
    expect(output).toContain('`ledge deploy`');
    expect(output).toContain('10501');
    expect(Date.now() - started).toBeLessThan(55_000); // wrangler() kills it at 60 s
    // The preview upload is refused in the v4 envelope with 501, for a script that does not exist too.
    const upload = await fetch(
      `${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/not-deployed-yet/edge-preview`,
      { method: 'POST', headers: ledge.tokenHeaders, body: new FormData() },
    );
    expect(upload.status).toBe(501);
    expect(await upload.json()).toMatchObject({ success: false, errors: [{ code: 10501 }], result: null });
  });

  it('a second wrangler deploy keeps the secret (none is sent)', async () => {
    const result = await wrangler(['deploy']);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const host = `my-worker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/k')).text).toBe('v / s3cr3t-value / hi');
  });
});
