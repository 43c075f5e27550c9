import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const WORKER = `export default {
  async fetch(request) {
    const key = new Request('https://example.com/cached');
    const response = new Response('kept?', { headers: { 'cache-control': 'public, max-age=600' } });
    const named = await caches.open('pages');
    await caches.default.put(key, response.clone());
    await named.put(key, response);
    return Response.json({
      defaultMatch: (await caches.default.match(key)) ?? null,
      namedMatch: (await named.match(key)) ?? null,
      defaultDeleted: await caches.default.delete(key),
      namedDeleted: await named.delete(key),
    });
  },
};
`;

/** The Cache API answers as on *.workers.dev: every call works, and nothing is kept. */
describe('the Cache API in a Worker', () => {
  let ledge: TestLedge;
  let host: string;

  beforeAll(async () => {
    ledge = await startLedge();
    expect((await uploadScript(ledge, 'cached', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'cached');
    host = `cached.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  it('puts, matches and deletes without throwing, in caches.default and caches.open(), keeping nothing', async () => {
    const answer = await callFunction(functionsPort(ledge), host, '/');
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      defaultMatch: null,
      namedMatch: null,
      defaultDeleted: false,
      namedDeleted: false,
    });
  });
});
