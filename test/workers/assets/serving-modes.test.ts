import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';
import { deployAssetsSite } from './api-deploy.ts';

/** The directory of Cloudflare's html_handling page (a file and a folder), plus pages for not_found_handling. */
const FILES = {
  '/index.html': '<h1>home</h1>',
  '/file.html': '<h1>file</h1>',
  '/folder/index.html': '<h1>folder</h1>',
  '/404.html': '<h1>top 404</h1>',
  '/nested/404.html': '<h1>nested 404</h1>',
  '/nested/page.html': '<h1>nested page</h1>',
};
const FILE = '<h1>file</h1>';
const FOLDER = '<h1>folder</h1>';

type Expected = { status: 200; body: string } | { status: 307; location: string } | { status: 'not-found' };
const ok = (body: string): Expected => ({ status: 200, body });
const to = (location: string): Expected => ({ status: 307, location });
const notFound: Expected = { status: 'not-found' };

/**
 * The tables of Cloudflare's "HTML handling" page (developers.cloudflare.com/workers/static-assets/routing/
 * advanced/html-handling), request by request, for each mode; where the page and the code that serves assets on
 * Cloudflare disagree, the code's answer.
 */
const HTML_HANDLING: Record<string, Record<string, Expected>> = {
  'auto-trailing-slash': {
    '/file': ok(FILE),
    '/file.html': to('/file'),
    '/file/': to('/file'),
    '/file/index': to('/file'),
    '/file/index.html': to('/file'),
    '/folder': to('/folder/'),
    // The page's table says /folder for these three; Cloudflare's asset worker (workers-sdk's asset-worker
    // request handler, htmlHandlingAutoTrailingSlash) redirects them to the folder's canonical /folder/.
    '/folder.html': to('/folder/'),
    '/folder/': ok(FOLDER),
    '/folder/index': to('/folder/'),
    '/folder/index.html': to('/folder/'),
  },
  'force-trailing-slash': {
    '/file': to('/file/'),
    '/file.html': to('/file/'),
    '/file/': ok(FILE),
    '/file/index': to('/file/'),
    '/file/index.html': to('/file/'),
    '/folder': to('/folder/'),
    '/folder.html': to('/folder/'),
    '/folder/': ok(FOLDER),
    '/folder/index': to('/folder/'),
    '/folder/index.html': to('/folder/'),
  },
  'drop-trailing-slash': {
    '/file': ok(FILE),
    '/file.html': to('/file'),
    '/file/': to('/file'),
    '/file/index': to('/file'),
    '/file/index.html': to('/file'),
    '/folder': ok(FOLDER),
    '/folder.html': to('/folder'),
    '/folder/': to('/folder'),
    '/folder/index': to('/folder'),
    '/folder/index.html': to('/folder'),
  },
  none: {
    '/file': notFound,
    '/file.html': ok(FILE),
    '/file/': notFound,
    '/file/index': notFound,
    '/file/index.html': notFound,
    '/folder': notFound,
    '/folder.html': notFound,
    '/folder/': notFound,
    '/folder/index': notFound,
    '/folder/index.html': ok(FOLDER),
  },
};

/** Each html_handling mode deployed with one not_found_handling mode: all four and all three are covered. */
const SITES = [
  { script: 'html-auto', html_handling: 'auto-trailing-slash', not_found_handling: 'none' },
  { script: 'html-force', html_handling: 'force-trailing-slash', not_found_handling: 'single-page-application' },
  { script: 'html-drop', html_handling: 'drop-trailing-slash', not_found_handling: '404-page' },
  { script: 'html-none', html_handling: 'none', not_found_handling: '404-page' },
] as const;

describe('static assets are served as Cloudflare documents each html_handling and not_found_handling mode', () => {
  let ledge: TestLedge;
  let subdomain: string;
  const get = (script: string, path: string, headers: Record<string, string> = {}) =>
    callFunction(functionsPort(ledge), `${script}.${subdomain}.localhost`, path, { headers });

  beforeAll(async () => {
    ledge = await startLedge();
    subdomain = await accountSubdomain(ledge);
    for (const { script, ...config } of SITES) await deployAssetsSite(ledge, script, FILES, config);
  });
  afterAll(async () => ledge?.close());

  /** What a request that finds no asset gets, per not_found_handling (navigation headers as a browser sends). */
  async function expectNotFound(site: (typeof SITES)[number], path: string) {
    const res = await get(site.script, path, { accept: 'text/html', 'sec-fetch-mode': 'navigate' });
    const where = `${site.script} ${path}`;
    if (site.not_found_handling === 'none') {
      expect(res.status, where).toBe(404);
      expect(res.text, where).toBe('');
    } else if (site.not_found_handling === '404-page') {
      expect(res.status, where).toBe(404);
      expect(res.text, where).toBe(path.startsWith('/nested/') ? '<h1>nested 404</h1>' : '<h1>top 404</h1>');
    } else {
      expect(res.status, where).toBe(200);
      expect(res.text, where).toBe('<h1>home</h1>');
    }
  }

  for (const site of SITES) {
    it(`html_handling = "${site.html_handling}" (not_found_handling = "${site.not_found_handling}")`, async () => {
      for (const [path, expected] of Object.entries(HTML_HANDLING[site.html_handling]!)) {
        const res = await get(site.script, path);
        const where = `${site.script} ${path}`;
        if (expected.status === 'not-found') await expectNotFound(site, path);
        else if (expected.status === 307) {
          expect(res.status, where).toBe(307);
          expect(new URL(String(res.headers.location), 'http://x').pathname, where).toBe(expected.location);
        } else {
          expect(res.status, where).toBe(200);
          expect(res.text, where).toBe(expected.body);
          expect(res.headers['content-type'], where).toMatch(/^text\/html/);
        }
      }
    });
  }

  it('not_found_handling: none answers an empty 404, 404-page the nearest 404.html, single-page-application the index', async () => {
    for (const site of SITES) {
      await expectNotFound(site, '/no/such/page');
      await expectNotFound(site, '/nested/missing');
    }
    // A real file is served as itself whatever the mode.
    for (const site of SITES.filter((s) => s.html_handling !== 'none')) {
      const page = await get(
        site.script,
        site.html_handling === 'force-trailing-slash' ? '/nested/page/' : '/nested/page',
      );
      expect(page.status, site.script).toBe(200);
      expect(page.text, site.script).toBe('<h1>nested page</h1>');
    }
  });
});
