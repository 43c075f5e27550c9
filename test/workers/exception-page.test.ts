import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const WORKER = `export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/boom') throw new TypeError('kaboom');
    if (url.pathname === '/500') return new Response('my own 500', { status: 500 });
    return new Response('ok');
  },
};
`;

/** A script that throws answers as on Cloudflare: 500 with error 1101, an HTML page for browsers. */
describe('a script that throws', () => {
  let ledge: TestLedge;
  let host: string;
  let port: number;
  beforeAll(async () => {
    ledge = await startLedge();
    expect((await uploadScript(ledge, 'thrower', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'thrower');
    host = `thrower.${await accountSubdomain(ledge)}.localhost`;
    port = functionsPort(ledge);
  });
  afterAll(async () => ledge?.close(), 150_000);

  it('answers 500 with the 1101 page for a browser and `error code: 1101` for other clients', async () => {
    const page = await callFunction(port, host, '/boom', { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(500);
    expect(page.headers['content-type']).toBe('text/html; charset=UTF-8');
    expect(page.text).toContain('<h1>Error 1101</h1>');
    expect(page.text).toContain('Worker threw exception');
    expect(page.text).toContain(host);
    expect(page.text).not.toContain('kaboom');
    const plain = await callFunction(port, host, '/boom', { headers: { accept: '*/*' } });
    expect(plain.status).toBe(500);
    expect(plain.text).toBe('error code: 1101');
  });

  it('answers the same once other scripts run, through the front process and its own backend', async () => {
    const other = `export default { fetch() { return new Response('other'); } };`;
    expect((await uploadScript(ledge, 'other', { modules: { 'index.js': other } })).status).toBe(200);
    await enableWorkersDev(ledge, 'other');
    const otherHost = `other.${await accountSubdomain(ledge)}.localhost`;
    await waitFor(async () => (await callFunction(port, otherHost, '/')).text === 'other', 'the second script', {
      timeoutMs: 60_000,
    });
    const page = await callFunction(port, host, '/boom', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(500);
    expect(page.text).toContain('<h1>Error 1101</h1>');
    expect((await callFunction(port, host, '/boom')).text).toBe('error code: 1101');
  });

  it("leaves the script's own 500 and other answers alone", async () => {
    const own = await callFunction(port, host, '/500', { headers: { accept: 'text/html' } });
    expect(own).toMatchObject({ status: 500, text: 'my own 500' });
    expect((await callFunction(port, host, '/')).text).toBe('ok');
  });
});
