import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from '../helpers.ts';
import { deployAssetsSite } from './api-deploy.ts';

const SMALL = 's'.repeat(1024);
const BIG = 'b'.repeat(100 * 1024);

/**
 * The router keeps an assets-only site's small files in its isolate (src/workerd/isolate/asset-cache.ts).
 * What is served must not change: headers from `_headers`, 304s, HEAD, not_found_handling by
 * navigation. To see what comes from memory, the test replaces files in the version's directory behind the
 * runtime's back (a version's directory never changes otherwise): a cached file keeps its first bytes, a
 * large one and every bypassing request read the directory.
 */
describe('assets: small files from the router isolate', () => {
  let ledge: TestLedge;
  let host: string;
  // A fresh connection each: the functions port's processes (each its own isolate) all get some.
  const get = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    callFunction(functionsPort(ledge), host, path, { headers, method, agent: new Agent({ keepAlive: false }) });

  beforeAll(async () => {
    ledge = await startLedge();
    host = `cached.${await accountSubdomain(ledge)}.localhost`;
    await deployAssetsSite(
      ledge,
      'cached',
      { '/index.html': '<h1>home</h1>', '/small.txt': SMALL, '/big.txt': BIG },
      { not_found_handling: 'single-page-application', _headers: '/small.txt\n  X-Site: cached\n' },
    );
  });
  afterAll(async () => ledge?.close());

  /** Replaces a file of the served version's directory with other bytes (a new inode, as a deploy never does). */
  function replaceServedFile(name: string, text: string): void {
    const found = readdirSync(ledge.dataDir, { recursive: true, encoding: 'utf8' }).filter((p) =>
      p.endsWith(`/${name}`),
    );
    expect(found.length).toBeGreaterThan(0);
    for (const path of found) {
      const full = join(ledge.dataDir, path);
      writeFileSync(`${full}.new`, text);
      renameSync(`${full}.new`, full);
    }
  }

  it('answers a repeated GET with the same bytes and headers, and conditional and HEAD requests as the service does', async () => {
    const first = await get('/small.txt');
    expect(first.status).toBe(200);
    expect(first.text).toBe(SMALL);
    expect(first.headers['x-site']).toBe('cached');
    const again = await get('/small.txt');
    expect(again.status).toBe(200);
    expect(again.text).toBe(SMALL);
    expect(again.headers['x-site']).toBe('cached');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers['etag']).toBe(first.headers['etag']);
    expect(again.headers['cache-control']).toBe(first.headers['cache-control']);

    const notModified = await get('/small.txt', { 'if-none-match': String(first.headers['etag']) });
    expect(notModified.status).toBe(304);
    const head = await get('/small.txt', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');

    // Navigation and other requests for a missing page are told apart (not_found_handling), cached or not.
    for (let i = 0; i < 2; i++) {
      const page = await get('/no/such/page', { accept: 'text/html', 'sec-fetch-mode': 'navigate' });
      expect(page.status).toBe(200);
      expect(page.text).toBe('<h1>home</h1>');
    }
  });

  it('keeps small files only: a replaced small file still answers from memory, a large one and a range do not', async () => {
    // Connections are spread over the processes at random: 24 reach every one of them but for a 2^-23 chance.
    for (let i = 0; i < 24; i++) expect((await get('/small.txt')).text).toBe(SMALL);
    expect((await get('/big.txt')).text).toBe(BIG);
    replaceServedFile('small.txt', 'x'.repeat(1024));
    replaceServedFile('big.txt', 'y'.repeat(100 * 1024));
    for (let i = 0; i < 8; i++) {
      expect((await get('/small.txt')).text).toBe(SMALL);
      expect((await get('/big.txt')).text).toBe('y'.repeat(100 * 1024));
    }
    // A range request goes to the service (which answers it with the whole file).
    expect((await get('/small.txt', { range: 'bytes=0-3' })).text).toBe('x'.repeat(1024));
  });
});
