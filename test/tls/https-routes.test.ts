import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, uploadScript } from '../workers/helpers.ts';
import { curl, makeCertificate } from './helpers.ts';

/** Answers what the Worker sees of the request: its URL and the scheme its client used. */
const ECHO = `export default { fetch(request, env) {
  return Response.json({ who: env.WHO, url: request.url, proto: request.headers.get('x-forwarded-proto') });
} };`;

const ZONE = 'shop.test';
const ROUTED = `api.${ZONE}`;
const DOMAIN = `www.${ZONE}`;
const cert = makeCertificate([ROUTED, DOMAIN]);

describe('Workers routes and Custom Domains over HTTPS', () => {
  let ledge: TestLedge;
  let zoneId: string;
  let plainPort: number;
  let tlsPort: number;

  beforeAll(async () => {
    ledge = await startLedge();
    plainPort = ledge.server.platform.traffic.port!;
    tlsPort = ledge.server.platform.traffic.tlsPort!;
    const zone = await api(ledge, 'POST', '/zones', { name: ZONE, account: { id: ledge.accountId } });
    expect(zone.status, JSON.stringify(zone.body.errors)).toBe(200);
    zoneId = zone.body.result.id as string;
    for (const name of ['site', 'secure']) {
      const up = await uploadScript(ledge, name, {
        modules: { 'index.js': ECHO },
        metadata: { bindings: [{ name: 'WHO', type: 'plain_text', text: name }] },
      });
      expect(up.status, JSON.stringify(up.body.errors)).toBe(200);
    }
    const uploaded = await api(ledge, 'POST', `/zones/${zoneId}/custom_certificates`, {
      certificate: cert.certificate,
      private_key: cert.privateKey,
    });
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
  });
  afterAll(async () => ledge?.close());

  const https = (host: string, path: string, args: string[] = []) =>
    curl(`https://${host}:${tlsPort}${path}`, host, tlsPort, ['--cacert', cert.caFile, ...args]);

  it('serves a route over HTTP/1.1 and HTTP/2, the Worker seeing the https URL', async () => {
    const route = await api(ledge, 'POST', `/zones/${zoneId}/workers/routes`, {
      pattern: `${ROUTED}/*`,
      script: 'site',
    });
    expect(route.status, JSON.stringify(route.body.errors)).toBe(200);
    for (const version of ['--http1.1', '--http2']) {
      const answer = await https(ROUTED, '/v1/items?x=1', [version]);
      expect(answer.code, answer.stderr + answer.body).toBe(200);
      expect(answer.httpVersion).toBe(version === '--http2' ? '2' : '1.1');
      expect(JSON.parse(answer.body)).toEqual({
        who: 'site',
        url: `https://${ROUTED}:${tlsPort}/v1/items?x=1`,
        proto: 'https',
      });
    }
  });

  it('matches an https:// pattern only on the TLS port, before a scheme-less one', async () => {
    const route = await api(ledge, 'POST', `/zones/${zoneId}/workers/routes`, {
      pattern: `https://${ROUTED}/*`,
      script: 'secure',
    });
    expect(route.status, JSON.stringify(route.body.errors)).toBe(200);
    expect(JSON.parse((await https(ROUTED, '/a')).body).who).toBe('secure');
    const plain = await curl(`http://${ROUTED}:${plainPort}/a`, ROUTED, plainPort);
    expect(JSON.parse(plain.body).who).toBe('site');
  });

  it('serves a Custom Domain over HTTPS', async () => {
    const attached = await api(ledge, 'PUT', `/accounts/${ledge.accountId}/workers/domains`, {
      hostname: DOMAIN,
      service: 'site',
      zone_id: zoneId,
    });
    expect(attached.status, JSON.stringify(attached.body.errors)).toBe(200);
    const answer = await https(DOMAIN, '/');
    expect(answer.code, answer.stderr + answer.body).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ who: 'site', url: `https://${DOMAIN}:${tlsPort}/` });
  });

  it('redirects a routed hostname to HTTPS with always_use_https, before the route runs', async () => {
    const before = await curl(`http://${ROUTED}:${plainPort}/p?q=1`, ROUTED, plainPort);
    expect(before.code).toBe(200);
    await api(ledge, 'PATCH', `/zones/${zoneId}/settings/always_use_https`, { value: 'on' });
    try {
      const after = await curl(`http://${ROUTED}:${plainPort}/p?q=1`, ROUTED, plainPort);
      expect(after.code, after.body).toBe(301);
      expect(after.headers).toMatch(new RegExp(`location: https://${ROUTED}:${tlsPort}/p\\?q=1`, 'i'));
    } finally {
      await api(ledge, 'PATCH', `/zones/${zoneId}/settings/always_use_https`, { value: 'off' });
    }
  });
});
