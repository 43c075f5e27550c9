import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isValidHostHeader } from '../../src/proxy/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, callFunction, uploadScript } from '../workers/helpers.ts';

describe('worker routes: a Host header no URL can hold', () => {
  let ledge: TestLedge;
  const traffic = (host: string) => callFunction(ledge.server.platform.traffic.port!, host, '/', { headers: { host } });

  beforeAll(async () => {
    ledge = await startLedge();
    const zone = await api(ledge, 'POST', '/zones', { name: 'example.com', account: { id: ledge.accountId } });
    expect(zone.status, JSON.stringify(zone.body.errors)).toBe(200);
    const source = 'export default { fetch(request) { return new Response(request.url); } };';
    expect((await uploadScript(ledge, 'site', { modules: { 'index.js': source } })).status).toBe(200);
    const route = { pattern: 'api.example.com/*', script: 'site' };
    expect((await api(ledge, 'POST', `/zones/${zone.body.result.id}/workers/routes`, route)).status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('answers 400 to a routed hostname with a port that is not one, and the script still serves', async () => {
    for (const host of ['api.example.com:1:2', 'api.example.com:x', 'api.example.com:99999']) {
      const answer = await traffic(host);
      expect(answer.status, `${host}: ${answer.text}`).toBe(400);
      expect(answer.text).toBe('error code: 400\nThe Host header is not a valid host name and port.\n');
    }
    const served = await traffic('api.example.com:8080');
    expect(served.status).toBe(200);
    expect(served.text).toBe('http://api.example.com:8080/');
  });

  it('tells valid Host headers from invalid ones', () => {
    for (const host of ['a', 'a.example.com', 'a.example.com:80', 'a:', '[::1]', '[::1]:8443', 'xn--bcher-kva.example'])
      expect(isValidHostHeader(host), host).toBe(true);
    for (const host of ['a:1:2', 'a:x', 'a:65536', 'a b', '[::1', 'a/b', 'user@a', ''])
      expect(isValidHostHeader(host), host).toBe(false);
  });
});
