import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { runWrangler } from '../../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';

const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/api/via-binding') return env.ASSETS.fetch(new URL('/app.js', request.url));
    if (url.pathname.startsWith('/api/')) return Response.json({ from: 'worker', path: url.pathname });
    return new Response('worker fallback', { status: 418 });
  },
};
`;

function writeProject(root: string, files: Record<string, string>): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

/** The real wrangler deploys Workers with static assets; workerd's own assets service serves them. */
describe('static assets deployed by wrangler', () => {
  let ledge: TestLedge;
  let host: (script: string) => Promise<string>;
  const wrangler = (cwd: string, args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
  const get = async (script: string, path: string, headers: Record<string, string> = {}) =>
    callFunction(functionsPort(ledge), await host(script), path, { headers });

  beforeAll(async () => {
    ledge = await startLedge();
    host = async (script) => `${script}.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  const site = () =>
    writeProject(tempDir('assets-site-'), {
      'src/index.js': WORKER,
      'wrangler.jsonc': JSON.stringify({
        name: 'site',
        main: 'src/index.js',
        compatibility_date: '2025-06-01',
        assets: {
          directory: './public',
          binding: 'ASSETS',
          not_found_handling: 'single-page-application',
          run_worker_first: ['/api/*', '!/api/static/*'],
        },
      }),
      'public/index.html': '<!doctype html><title>Home</title><h1>home</h1>',
      'public/app.js': 'console.log("app v1");',
      'public/about/index.html': '<h1>about</h1>',
      'public/api/static/data.json': '{"static":true}',
      'public/_headers': '/app.js\n  X-Asset-Header: yes\n',
      'public/_redirects': '/old /about/ 301\n/blog/* /posts/:splat 302\n',
    });

  it('wrangler deploy uploads the files and the site answers as Cloudflare does', async () => {
    const project = site();
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/Uploaded 4 of 4 assets/);

    const home = await get('site', '/');
    expect(home.status).toBe(200);
    expect(home.text).toContain('<h1>home</h1>');
    expect(home.headers['content-type']).toMatch(/^text\/html/);

    const script = await get('site', '/app.js');
    expect(script.text).toBe('console.log("app v1");');
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.headers['x-asset-header']).toBe('yes');
    const etag = script.headers['etag'] as string;
    expect(etag).toBeTruthy();
    expect((await get('site', '/app.js', { 'if-none-match': etag })).status).toBe(304);
    // Ranges as workerd's assets service answers them (the bare service too): the whole file.
    const range = await get('site', '/app.js', { range: 'bytes=0-6' });
    expect([range.status, range.text]).toEqual([200, 'console.log("app v1");']);

    // html_handling (auto-trailing-slash): /about serves about/index.html after the redirect to /about/.
    expect((await get('site', '/about')).headers['location']).toBe('/about/');
    expect((await get('site', '/about/')).text).toBe('<h1>about</h1>');
    // _redirects: static, then a splat.
    const old = await get('site', '/old');
    expect([old.status, old.headers['location']]).toEqual([301, '/about/']);
    const blog = await get('site', '/blog/2025/hello');
    expect([blog.status, blog.headers['location']]).toEqual([302, '/posts/2025/hello']);
    // run_worker_first patterns with a ! exclusion, and the ASSETS binding.
    expect(JSON.parse((await get('site', '/api/users')).text)).toEqual({ from: 'worker', path: '/api/users' });
    expect((await get('site', '/api/static/data.json')).text).toBe('{"static":true}');
    expect((await get('site', '/api/via-binding')).text).toBe('console.log("app v1");');
    // not_found_handling = single-page-application: a path that is no file and no run_worker_first route
    // gets index.html (the worker is not asked).
    const route = await get('site', '/dashboard/settings', { accept: 'text/html' });
    expect(route.status).toBe(200);
    expect(route.text).toContain('<h1>home</h1>');
    // _headers and _redirects are rules, never files.
    expect((await get('site', '/_headers', { accept: 'text/html' })).text).not.toContain('X-Asset-Header');
  });

  it('a redeploy of one changed file uploads exactly that file, and the site switches to it', async () => {
    const project = site();
    writeFileSync(join(project, 'public/app.js'), 'console.log("app v2");');
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/Uploaded 1 of 1 assets?/);
    expect(deployed.stdout).toMatch(/\(3 already uploaded\)/);
    expect((await get('site', '/app.js')).text).toBe('console.log("app v2");');
    expect((await get('site', '/')).text).toContain('<h1>home</h1>');
  });

  it('an unchanged redeploy sends no file', async () => {
    const project = site();
    writeFileSync(join(project, 'public/app.js'), 'console.log("app v2");');
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect(deployed.stdout).toContain('No updated asset files to upload');
  });

  it('wrangler versions upload keeps the current deployment serving until the version is deployed', async () => {
    const project = site();
    writeFileSync(join(project, 'public/app.js'), 'console.log("app v3");');
    const uploaded = await wrangler(project, ['versions', 'upload']);
    expect(uploaded.code, uploaded.stdout + uploaded.stderr).toBe(0);
    expect((await get('site', '/app.js')).text).toBe('console.log("app v2");');
    const versionId = /Worker Version ID:\s*([0-9a-f-]{36})/.exec(uploaded.stdout)?.[1];
    expect(versionId, uploaded.stdout).toBeTruthy();
    const deployed = await wrangler(project, ['versions', 'deploy', `${versionId}@100%`, '--yes']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect((await get('site', '/app.js')).text).toBe('console.log("app v3");');
  });

  it('an assets-only project (no main) is served with its 404 page', async () => {
    const project = writeProject(tempDir('assets-only-'), {
      'wrangler.toml':
        'name = "docs"\ncompatibility_date = "2025-06-01"\n\n[assets]\ndirectory = "./dist"\nnot_found_handling = "404-page"\nhtml_handling = "drop-trailing-slash"\n',
      'dist/index.html': '<h1>docs</h1>',
      'dist/guide.html': '<h1>guide</h1>',
      'dist/404.html': '<h1>not here</h1>',
      'dist/img/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
    });
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect((await get('docs', '/')).text).toBe('<h1>docs</h1>');
    expect((await get('docs', '/guide')).text).toBe('<h1>guide</h1>');
    expect((await get('docs', '/guide.html')).headers['location']).toBe('/guide');
    expect((await get('docs', '/img/logo.svg')).headers['content-type']).toMatch(/^image\/svg\+xml/);
    const missing = await get('docs', '/nope');
    expect([missing.status, missing.text]).toEqual([404, '<h1>not here</h1>']);
  });
});
