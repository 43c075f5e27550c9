import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';

function project(files: Record<string, string>): string {
  const root = tempDir('ledge-assets-cli-');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** `ledge deploy` reads `[assets]` as wrangler does: the same protocol, the same serving. */
describe('ledge deploy with [assets]', () => {
  let ledge: TestLedge;
  const get = async (script: string, path: string) =>
    callFunction(functionsPort(ledge), `${script}.${await accountSubdomain(ledge)}.localhost`, path);

  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('deploys an assets-only site, honouring .assetsignore and _redirects, and re-sends only what changed', async () => {
    const dir = project({
      'wrangler.toml':
        'name = "cli-site"\ncompatibility_date = "2025-06-01"\n\n[assets]\ndirectory = "./site"\nnot_found_handling = "404-page"\n',
      'site/index.html': '<h1>cli</h1>',
      'site/404.html': '<h1>lost</h1>',
      'site/secret.txt': 'do not publish',
      'site/.assetsignore': 'secret.txt\n',
      'site/_redirects': '/home / 302\n',
    });
    const first = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toContain('Assets: 2 files, 2 uploaded');
    expect((await get('cli-site', '/')).text).toBe('<h1>cli</h1>');
    expect((await get('cli-site', '/secret.txt')).text).toBe('<h1>lost</h1>');
    const home = await get('cli-site', '/home');
    expect([home.status, home.headers['location']]).toEqual([302, '/']);

    writeFileSync(join(dir, 'site/index.html'), '<h1>cli v2</h1>');
    const second = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(second.code, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain('Assets: 2 files, 1 uploaded (1 already stored)');
    expect((await get('cli-site', '/')).text).toBe('<h1>cli v2</h1>');
  });

  it('deploys a function with assets and an ASSETS binding', async () => {
    const dir = project({
      'wrangler.toml':
        'name = "cli-app"\nmain = "src/index.ts"\ncompatibility_date = "2025-06-01"\n\n[assets]\ndirectory = "./public"\nbinding = "ASSETS"\nrun_worker_first = true\n',
      'src/index.ts':
        'export default { async fetch(request: Request, env: { ASSETS: { fetch(r: Request): Promise<Response> } }) { const r = await env.ASSETS.fetch(request); return new Response("wrapped:" + (await r.text())); } };\n',
      'public/index.html': 'page',
    });
    const result = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect((await get('cli-app', '/')).text).toBe('wrapped:page');
  });

  it('ledge create app --template static makes a site that ledge deploy serves', async () => {
    const dir = join(tempDir('ledge-static-'), 'my-static');
    const created = await runCli(['create', 'app', dir, '--template', 'static'], { env: cliEnv(ledge) });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('public/index.html');
    const deployed = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    const home = await get('my-static', '/');
    expect(home.text).toContain('<h1>my-static</h1>');
    expect(home.headers['x-content-type-options']).toBe('nosniff');
    const missing = await get('my-static', '/nowhere');
    expect([missing.status, missing.text]).toEqual([404, expect.stringContaining('Not found')]);
    const unknown = await runCli(['create', 'app', join(dir, '..', 'x'), '--template', 'nope'], { env: cliEnv(ledge) });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown template "nope"');
  });
});
