import { readFileSync } from 'node:fs';
import { Agent as UndiciAgent, WebSocket as UndiciWebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import {
  createLoadBalancer,
  createPool,
  createZone,
  NamedOrigin,
  trafficPort,
} from '../load-balancing/traffic-helpers.ts';
import { curl, makeCertificate } from './helpers.ts';

let ledge: TestLedge;
let origin: NamedOrigin;
let zoneId: string;
let tlsPort: number;
const logs: string[] = [];
const HOST = 'site.example.test';
const cert = makeCertificate([HOST, 'www.example.test', 'cdn.example.test']);

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${ledge.apiUrl}${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    body: JSON.parse(text) as {
      success: boolean;
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers' shapes are asserted field by field
      result: any;
      errors: { code: number; message: string }[];
    },
  };
}

beforeAll(async () => {
  ledge = await startLedge({ logger: createLogger('debug', systemClock, {}, (line) => void logs.push(line)) });
  tlsPort = ledge.server.platform.traffic.tlsPort!;
  origin = await NamedOrigin.start('origin-a');
  zoneId = await createZone(ledge, 'example.test');
  const pool = await createPool(ledge, 'p', [origin]);
  await createLoadBalancer(ledge, zoneId, { name: HOST, default_pools: [pool], fallback_pool: pool });
});

afterAll(async () => {
  await ledge?.close();
  await origin?.stop();
});

describe('HTTPS on the traffic TLS port with an uploaded certificate', () => {
  let certificateId: string;

  it('takes the certificate and never answers its key', async () => {
    const created = await api('POST', `/zones/${zoneId}/custom_certificates`, {
      certificate: cert.certificate,
      private_key: cert.privateKey,
    });
    expect(created.status).toBe(200);
    certificateId = created.body.result.id;
    expect(created.body.result).toMatchObject({ zone_id: zoneId, status: 'active', bundle_method: 'ubiquitous' });
    expect(created.body.result.hosts.sort()).toEqual(['cdn.example.test', HOST, 'www.example.test']);
    const listed = await api('GET', `/zones/${zoneId}/custom_certificates`);
    const got = await api('GET', `/zones/${zoneId}/custom_certificates/${certificateId}`);
    for (const answer of [created, listed, got]) expect(answer.text).not.toMatch(/PRIVATE KEY|private_key/);
    // At rest the key is sealed.
    const row = await ledge.server.platform.db.get<{ sealed_key: string }>(
      'SELECT sealed_key FROM tls_certificates WHERE id = ?',
      [certificateId],
    );
    expect(row!.sealed_key).not.toContain('PRIVATE KEY');
    expect(logs.join('\n')).not.toContain(cert.privateKey.split('\n')[1]!);
  });

  it('refuses a key that does not belong to the certificate, and bad PEM, with 400', async () => {
    const other = makeCertificate(['x.example.test']);
    const mismatch = await api('POST', `/zones/${zoneId}/custom_certificates`, {
      certificate: cert.certificate,
      private_key: other.privateKey,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors[0]?.message).toMatch(/does not match/);
    const garbage = await api('POST', `/zones/${zoneId}/custom_certificates`, { certificate: 'x', private_key: 'y' });
    expect(garbage.status).toBe(400);
  });

  it('serves the load balancer over HTTP/1.1 and HTTP/2 with that certificate, chosen by SNI', async () => {
    const url = `https://${HOST}:${tlsPort}/hello`;
    const h1 = await curl(url, HOST, tlsPort, ['--cacert', cert.caFile, '--http1.1']);
    expect(h1.stderr).toBe('');
    expect([h1.code, h1.httpVersion]).toEqual([200, '1.1']);
    expect(h1.headers).toMatch(/x-origin: origin-a/i);
    const h2 = await curl(url, HOST, tlsPort, ['--cacert', cert.caFile, '--http2']);
    expect(h2.stderr).toBe('');
    expect([h2.code, h2.httpVersion]).toEqual([200, '2']);
    expect(h2.headers).toMatch(/x-origin: origin-a/i);
    const seen = origin.seen.filter((request) => request.url === '/hello');
    expect(seen.length).toBe(2);
    for (const request of seen) {
      expect(request.headers['x-forwarded-proto']).toBe('https');
      expect(request.headers['host']).toBe(`${HOST}:${tlsPort}`);
      expect(Object.keys(request.headers).some((name) => name.startsWith(':'))).toBe(false);
    }
  });

  it('proxies a WebSocket over HTTPS (the TLS connection handed to node:http, then tunnelled)', async () => {
    const dispatcher = new UndiciAgent({
      connect: {
        ca: readFileSync(cert.caFile, 'utf8'),
        lookup: (_host, _options, done) => done(null, [{ address: '127.0.0.1', family: 4 }]),
      },
    });
    const socket = new UndiciWebSocket(`wss://${HOST}:${tlsPort}/ws`, { dispatcher });
    const messages = Array.from({ length: 20 }, (_, i) => `message ${i} ${'m'.repeat(i * 4)}`);
    const replies: string[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => {
        for (const message of messages) socket.send(message);
      };
      socket.onmessage = (event: { data: unknown }) => {
        replies.push(String(event.data));
        if (replies.length === messages.length) resolve();
      };
      socket.onerror = () => reject(new Error('websocket failed'));
    });
    expect(replies).toEqual(messages.map((message) => `origin-a: ${message}`));
    const upgrade = origin.seen.find((request) => request.url === '/ws');
    expect(upgrade?.headers['x-forwarded-proto']).toBe('https');
    socket.close();
    await dispatcher.close();
  });

  it("serves a public bucket's custom domain over HTTPS and HTTP/2", async () => {
    await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'site' });
    const put = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/site/objects/index.html`, {
      method: 'PUT',
      headers: { ...ledge.tokenHeaders, 'content-type': 'text/html' },
      body: '<h1>over tls</h1>',
    });
    expect(put.status).toBe(200);
    const domain = await api('POST', `/accounts/${ledge.accountId}/r2/buckets/site/domains/custom`, {
      domain: 'cdn.example.test',
      zoneId,
      enabled: true,
    });
    expect(domain.status).toBe(200);
    const host = 'cdn.example.test';
    for (const version of ['--http1.1', '--http2']) {
      const answer = await curl(`https://${host}:${tlsPort}/index.html`, host, tlsPort, [
        '--cacert',
        cert.caFile,
        version,
      ]);
      expect(answer.stderr).toBe('');
      expect([answer.code, answer.body]).toEqual([200, '<h1>over tls</h1>']);
      expect(answer.httpVersion).toBe(version === '--http2' ? '2' : '1.1');
    }
  });

  it('refuses the handshake for a name it has no certificate for', async () => {
    const answer = await curl(`https://nothing.example.test:${tlsPort}/`, 'nothing.example.test', tlsPort, ['-k']);
    expect(answer.code).toBe(0);
    expect(answer.stderr).toMatch(/unrecognized name/i);
  });

  it('refuses TLS below 1.2 by default, and below the zone min_tls_version once raised', async () => {
    const url = `https://${HOST}:${tlsPort}/`;
    // The client offers TLS 1.1 at OpenSSL's security level 0 (its default level would refuse 1.1 itself):
    // a refusal is the server's.
    const legacy = (version: '1.0' | '1.1') =>
      curl(url, HOST, tlsPort, [
        '--cacert',
        cert.caFile,
        `--tlsv${version}`,
        '--tls-max',
        version,
        '--ciphers',
        'DEFAULT:@SECLEVEL=0',
      ]);
    const old = await legacy('1.1');
    expect(old.code).toBe(0);
    expect(old.stderr).toMatch(/protocol version/);
    const setting = await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '1.3' });
    expect(setting.body.result).toMatchObject({ id: 'min_tls_version', value: '1.3', editable: true });
    const tls12 = await curl(url, HOST, tlsPort, ['--cacert', cert.caFile, '--tls-max', '1.2']);
    expect(tls12.code).toBe(0);
    const tls13 = await curl(url, HOST, tlsPort, ['--cacert', cert.caFile, '--tlsv1.3']);
    expect(tls13.code).toBe(200);
    expect((await api('GET', `/zones/${zoneId}/settings/min_tls_version`)).body.result.value).toBe('1.3');
    const bad = await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '2.0' });
    expect(bad.status).toBe(400);
    await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '1.2' });
  });

  it('serves TLS 1.1 and 1.0 clients once the zone lowers min_tls_version to them, as Cloudflare does', async () => {
    const url = `https://${HOST}:${tlsPort}/`;
    const legacy = (version: '1.0' | '1.1') =>
      curl(url, HOST, tlsPort, [
        '--cacert',
        cert.caFile,
        `--tlsv${version}`,
        '--tls-max',
        version,
        '--ciphers',
        'DEFAULT:@SECLEVEL=0',
      ]);
    try {
      await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '1.1' });
      await waitFor(async () => ((await legacy('1.1')).code === 200 ? true : undefined), 'a TLS 1.1 answer');
      const tls10 = await legacy('1.0');
      expect([tls10.code, tls10.stderr]).toEqual([0, expect.stringMatching(/protocol version/)]);
      await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '1.0' });
      await waitFor(async () => ((await legacy('1.0')).code === 200 ? true : undefined), 'a TLS 1.0 answer');
      // A modern client on the same zone still gets TLS 1.3.
      const modern = await curl(url, HOST, tlsPort, ['--cacert', cert.caFile, '-v']);
      expect([modern.code, modern.stderr]).toEqual([200, expect.stringContaining('TLSv1.3')]);
    } finally {
      await api('PATCH', `/zones/${zoneId}/settings/min_tls_version`, { value: '1.2' });
    }
  });

  it('redirects plain HTTP to HTTPS with always_use_https on', async () => {
    const port = trafficPort(ledge);
    const before = await curl(`http://${HOST}:${port}/a?b=1`, HOST, port);
    expect(before.code).toBe(200);
    expect((await api('GET', `/zones/${zoneId}/settings/always_use_https`)).body.result.value).toBe('off');
    await api('PATCH', `/zones/${zoneId}/settings/always_use_https`, { value: 'on' });
    const after = await curl(`http://${HOST}:${port}/a?b=1`, HOST, port);
    expect(after.code).toBe(301);
    expect(after.headers).toMatch(new RegExp(`location: https://${HOST}:${tlsPort}/a\\?b=1`, 'i'));
    await api('PATCH', `/zones/${zoneId}/settings/always_use_https`, { value: 'off' });
  });

  it("answers another account's zone as unknown and stores nothing", async () => {
    const otherZone = await createZone(ledge, 'other.test');
    const account = await ledge.server.platform.accounts.createAccount({ name: 'elsewhere' });
    await ledge.server.platform.db.run('UPDATE zones SET account_id = ? WHERE id = ?', [account.id, otherZone]);
    const theirs = makeCertificate(['other.test']);
    const answer = await api('POST', `/zones/${otherZone}/custom_certificates`, {
      certificate: theirs.certificate,
      private_key: theirs.privateKey,
    });
    expect(answer.status).toBe(404);
    expect((await api('GET', `/zones/${otherZone}/settings/min_tls_version`)).status).toBe(404);
    const rows = await ledge.server.platform.db.all('SELECT id FROM tls_certificates WHERE zone_id = ?', [otherZone]);
    expect(rows).toEqual([]);
  });

  it('stops serving a deleted certificate', async () => {
    expect((await api('DELETE', `/zones/${zoneId}/custom_certificates/${certificateId}`)).status).toBe(200);
    const answer = await curl(`https://${HOST}:${tlsPort}/`, HOST, tlsPort, ['--cacert', cert.caFile]);
    expect(answer.code).toBe(0);
    expect((await api('GET', `/zones/${zoneId}/custom_certificates/${certificateId}`)).status).toBe(404);
  });
});
