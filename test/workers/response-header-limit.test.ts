import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const WORKER = `export default {
  fetch(request) {
    const size = Number(new URL(request.url).searchParams.get('size'));
    return new Response('body', { headers: { 'x-big': 'a'.repeat(size) } });
  },
};`;

/** A GET with a client that takes headers of any size (Node's own default stops at 16 KB). */
function get(port: number, host: string, path: string) {
  return new Promise<{ status: number; header: number; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, maxHeaderSize: 4_000_000 }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, header: res.headers['x-big']?.length ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Response headers over the limit are reported as such, whether the script runs in the functions process itself or
 * (two scripts: a process each, behind the front) in a backend, where they used to come back as "1102 exceeded
 * resource limits".
 */
describe('response headers over the limit', () => {
  let ledge: TestLedge;
  let host: string;

  beforeAll(async () => {
    ledge = await startLedge();
    for (const name of ['headers', 'neighbour']) {
      expect((await uploadScript(ledge, name, { modules: { 'index.js': WORKER } })).status).toBe(200);
      await enableWorkersDev(ledge, name);
    }
    host = `headers.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close(), 60_000);

  it('answers 500 saying the headers are too large, not 1102; headers within the limit pass', async () => {
    const port = functionsPort(ledge);
    const within = await get(port, host, '/?size=100000');
    expect(within).toMatchObject({ status: 200, header: 100_000, text: 'body' });
    for (const size of [200_000, 600_000]) {
      const over = await get(port, host, `/?size=${size}`);
      expect(over.status, over.text).toBe(500);
      const total = Number(/response headers total (\d+) bytes/.exec(over.text)?.[1]);
      expect(total).toBeGreaterThan(size);
      expect(total).toBeLessThan(size + 200);
      expect(over.text).toContain('over the limit of 131072 bytes');
      expect(over.text).not.toContain('1102');
    }
    // The script's process is fine: the next answer is normal.
    expect(await get(port, host, '/?size=10')).toMatchObject({ status: 200, text: 'body' });
  });
});
