import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/ledge.ts';
import {
  LEDGE_BIN,
  PINNED_NODE_DIR,
  runAs,
  scratchHome,
  startAs,
  SYSTEM_NODE_DIR,
  userEnv,
  type Running, EPHEMERAL_PORT_FLAGS } from '../helpers/user-shell.ts';
import { callFunction } from '../workers/helpers.ts';

/**
 * "The first hour", the scaffolded app: `ledge create app` as a user runs it, then the app's own
 * `npm install && npm test` with the machine's Node (20 here) and with Node 24, and the real wrangler
 * from the app's folder exactly as its README says. Needs the npm registry (the app's devDependencies);
 * npm's cache of the machine is shared to keep it quick.
 */
describe('the app `ledge create app` scaffolds', () => {
  let home: string;
  let work: string;
  let app: string;
  let server: Running;
  let ready: { api_url: string; api_token: string; account_id: string; functions_port: number };
  const ledge = (args: string[], input?: string) =>
    runAs(LEDGE_BIN, args, { cwd: work, env: userEnv(home), ...(input === undefined ? {} : { input }) });
  /** `sh -c script` in the app folder with the given PATH (which Node runs), as in a user's terminal. */
  const shell = (script: string, path: string, extra: NodeJS.ProcessEnv = {}, input?: string) =>
    runAs('sh', ['-c', script], {
      cwd: app,
      env: userEnv(home, { PATH: path, npm_config_cache: join(homedir(), '.npm'), ...extra }),
      timeoutMs: 240_000,
      ...(input === undefined ? {} : { input }),
    });

  beforeAll(async () => {
    home = scratchHome();
    work = tempDir('ledge-user-');
    app = join(work, 'my-app');
    server = startAs(LEDGE_BIN, ['server', '--json', ...EPHEMERAL_PORT_FLAGS,], {
      cwd: work,
      env: userEnv(home),
    });
    ready = JSON.parse((await server.waitFor(/^\{.*\}$/m))[0]) as typeof ready;
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('is created with its README filled in for this machine', async () => {
    const created = await ledge(['create', 'app', 'my-app']);
    expect(created.code, created.stderr).toBe(0);
    const readme = readFileSync(join(app, 'README.md'), 'utf8');
    expect(readme).not.toContain('{{');
    expect(readme).toContain(`export CLOUDFLARE_API_BASE_URL=${ready.api_url}`);
    expect(readme).toContain(`export PATH="${REPO_ROOT}/node_modules/.bin:$PATH"`);
    expect(readme).toContain('WRANGLER_SEND_METRICS=false');
    expect(readme).toContain('ledge deploy');
    expect(readme).toContain('## Deploy to Cloudflare');
    // The URL the function will answer at on this server: its real functions port, the account's subdomain.
    const url = new RegExp(`curl (http://my-app\\.[a-z0-9-]+\\.localhost:${ready.functions_port})/cat-pic\\.jpg`);
    expect(readme).toMatch(url);
    expect(readme).not.toContain('<url>');
    expect(readFileSync(join(app, 'wrangler.toml'), 'utf8')).toContain(`account_id = "${ready.account_id}"`);
  });

  it.skipIf(SYSTEM_NODE_DIR === undefined)(
    "npm install && npm test passes with the machine's Node",
    async () => {
      const result = await shell('node --version && npm install --no-audit --no-fund && npm test', '/usr/bin:/bin');
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout.split('\n')[0]).toBe(runNodeVersion(SYSTEM_NODE_DIR!));
      // Quiet: no npm warning about esbuild's install script (see the template's allowScripts).
      expect(result.stderr).not.toContain('install-scripts');
      expect(result.stdout).toMatch(/^(#|ℹ) pass 3$/m);
      expect(result.stdout).toMatch(/^(#|ℹ) fail 0$/m);
    },
    240_000,
  );

  it('npm install && npm test passes with Node 24', async () => {
    const result = await shell(
      'node --version && npm install --no-audit --no-fund && npm test',
      `${PINNED_NODE_DIR}:/usr/bin:/bin`,
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^v24\./);
    expect(result.stdout).toMatch(/^(#|ℹ) pass 3$/m);
    expect(result.stdout).toMatch(/^(#|ℹ) fail 0$/m);
  }, 240_000);

  it("the real wrangler, from the app's folder as its README says, deploys it to Ledge", async () => {
    const wranglerEnv = {
      CLOUDFLARE_API_BASE_URL: ready.api_url,
      CLOUDFLARE_API_TOKEN: ready.api_token,
      WRANGLER_SEND_METRICS: 'false',
    };
    const path = `${REPO_ROOT}/node_modules/.bin:/usr/bin:/bin`;
    // The bucket as the README's first step makes it (wrangler r2 bucket create is in test/workers/wrangler.test.ts).
    const bucket = await ledge(['bucket', 'create', 'my-bucket']);
    expect(bucket.code, bucket.stderr).toBe(0);
    const deployed = await shell('wrangler deploy', path, wranglerEnv);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    const secret = await shell('wrangler secret put AUTH_KEY_SECRET', path, wranglerEnv, 's3cret\n');
    expect(secret.code, secret.stdout + secret.stderr).toBe(0);

    const subdomain = await fetch(`${ready.api_url}/accounts/${ready.account_id}/workers/subdomain`, {
      headers: { authorization: `Bearer ${ready.api_token}` },
    });
    const host = `my-app.${((await subdomain.json()) as { result: { subdomain: string } }).result.subdomain}.localhost`;
    const picture = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 31) % 251));
    const put = await callFunction(ready.functions_port, host, '/cat-pic.jpg', {
      method: 'PUT',
      headers: { 'X-Custom-Auth-Key': 's3cret' },
      body: picture,
    });
    expect(put.text).toBe('Put cat-pic.jpg successfully!');
    const got = await callFunction(ready.functions_port, host, '/cat-pic.jpg');
    expect(got.status).toBe(200);
    expect(got.body.equals(picture)).toBe(true);
  }, 180_000);
});

/** What `node --version` prints for the Node in `dir`. */
function runNodeVersion(dir: string): string {
  return execFileSync(join(dir, 'node'), ['--version'], { encoding: 'utf8' }).trim();
}
