import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../../helpers/ledge.ts';
import { runWrangler, WRANGLER3_ENTRY } from '../../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';

const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/api/asset') return env.ASSETS.fetch(new URL('/app.js', request.url));
    return Response.json({ from: 'worker', path: url.pathname });
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

/** wrangler 3 (npm `wrangler@3`, still in use) deploys static assets to Ledge unchanged, as wrangler 4 does. */
describe('static assets deployed by wrangler 3', () => {
  let ledge: TestLedge;
  let subdomain: string;
  const wrangler = (cwd: string, args: string[]) =>
    runWrangler(args, {
      entry: WRANGLER3_ENTRY,
      apiUrl: ledge.apiUrl,
      cwd,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
  const get = (script: string, path: string, headers: Record<string, string> = {}) =>
    callFunction(functionsPort(ledge), `${script}.${subdomain}.localhost`, path, { headers });

  beforeAll(async () => {
    ledge = await startLedge();
    subdomain = await accountSubdomain(ledge);
  });
  afterAll(async () => ledge?.close());

  const project = writeProject(tempDir('wrangler3-site-'), {
    'src/index.js': WORKER,
    'wrangler.toml':
      'name = "site3"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\n\n' +
      '[assets]\ndirectory = "./public"\nbinding = "ASSETS"\nnot_found_handling = "404-page"\n',
    'public/index.html': '<h1>home</h1>',
    'public/app.js': 'console.log("v1");',
    'public/404.html': '<h1>missing</h1>',
    'public/_headers': '/app.js\n  X-From-Headers: yes\n',
  });

  it('wrangler 3 deploy uploads the files, and the site and its Worker answer', async () => {
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/Uploaded 3 of 3 assets/);
    expect((await get('site3', '/')).text).toBe('<h1>home</h1>');
    const app = await get('site3', '/app.js');
    expect([app.status, app.text, app.headers['x-from-headers']]).toEqual([200, 'console.log("v1");', 'yes']);
    expect((await get('site3', '/api/asset')).text).toBe('console.log("v1");');
    // No file: the Worker runs (a Worker in front takes what no asset answers).
    expect(JSON.parse((await get('site3', '/anything')).text)).toEqual({ from: 'worker', path: '/anything' });
  });

  it('a wrangler 3 redeploy of one changed file uploads exactly that file', async () => {
    writeFileSync(join(project, 'public/app.js'), 'console.log("v2");');
    const deployed = await wrangler(project, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect(deployed.stdout).toMatch(/Uploaded 1 of 1 assets?/);
    expect((await get('site3', '/app.js')).text).toBe('console.log("v2");');
    expect((await get('site3', '/')).text).toBe('<h1>home</h1>');
  });

  it('an assets-only wrangler 3 project is served with its 404 page', async () => {
    const docs = writeProject(tempDir('wrangler3-docs-'), {
      'wrangler.toml':
        'name = "docs3"\ncompatibility_date = "2025-01-01"\n\n[assets]\ndirectory = "./dist"\nnot_found_handling = "404-page"\n',
      'dist/index.html': '<h1>docs</h1>',
      'dist/404.html': '<h1>not here</h1>',
    });
    const deployed = await wrangler(docs, ['deploy']);
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    expect((await get('docs3', '/')).text).toBe('<h1>docs</h1>');
    const missing = await get('docs3', '/nope');
    expect([missing.status, missing.text]).toEqual([404, '<h1>not here</h1>']);
  });
});
