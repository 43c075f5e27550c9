import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { CHROMIUM } from '../helpers/browser.ts';
import { freePort } from '../helpers/free-port.ts';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { curl } from './helpers.ts';
import { startPebble, type Pebble } from './pebble.ts';

/**
 * ACME against Debian's pebble (the ACME test server, RFC 8555), with pebble-challtestsrv as its DNS
 * (every name is 127.0.0.1): one Ledge orders by HTTP-01 (pebble's VA reaches its plain traffic port), another
 * by TLS-ALPN-01 (its TLS port). Pebble issues certificates that live 30 s, so a renewal happens in the test.
 */
const VALIDITY_SECONDS = 30;
let pebble: Pebble;
let http01: TestLedge;
let alpn01: TestLedge;
let origin: NamedOrigin;
const logs: string[] = [];

async function api(ledge: TestLedge, method: string, path: string, body?: unknown) {
  const res = await fetch(`${ledge.apiUrl}${path}`, {
    method,
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- asserted field by field
  return { status: res.status, text, body: JSON.parse(text) as { result: any } };
}

async function servedCertificate(ledge: TestLedge, zoneId: string) {
  const packs = await api(ledge, 'GET', `/zones/${zoneId}/ssl/certificate_packs`);
  const pack = packs.body.result[0];
  return pack?.status === 'active' ? pack : undefined;
}

/**
 * Pebble's validation authority must know the ports it checks before the servers start, so those two are chosen
 * first: another process may take one in between. The set-up then starts again on new ports.
 */
async function startPebbleAndServers(): Promise<void> {
  // The two ports pebble checks: the plain traffic port of the HTTP-01 server, the TLS port of the TLS-ALPN-01 one.
  const [trafficA, tlsB] = await Promise.all([freePort(), freePort()]);
  const started = await startPebble({ httpPort: trafficA, tlsPort: tlsB, validitySeconds: VALIDITY_SECONDS });
  const env = {
    LEDGE_ACME_DIRECTORY_URL: started.directoryUrl,
    LEDGE_ACME_CA_FILE: started.directoryCaFile,
    LEDGE_ACME_INTERVAL_MS: '500',
    LEDGE_ACME_RETRY_MS: '500',
  };
  const logger = createLogger('info', systemClock, {}, (line) => void logs.push(line));
  let first: TestLedge | undefined;
  try {
    first = await startLedge({ flags: { trafficPort: trafficA }, env, logger });
    const second = await startLedge({
      flags: { trafficTlsPort: tlsB },
      env: { ...env, LEDGE_ACME_CHALLENGE: 'tls-alpn-01' },
      logger,
    });
    [pebble, http01, alpn01] = [started, first, second];
  } catch (error) {
    await first?.close();
    started.stop();
    throw error;
  }
}

beforeAll(async () => {
  for (let attempt = 1; ; attempt++) {
    try {
      await startPebbleAndServers();
      break;
    } catch (error) {
      if (attempt === 3 || !String(error).includes('is in use')) throw error;
    }
  }
  origin = await NamedOrigin.start('origin-acme');
});

afterAll(async () => {
  await http01?.close();
  await alpn01?.close();
  await origin?.stop();
  pebble?.stop();
});

async function serveSite(ledge: TestLedge, zone: string, host: string): Promise<string> {
  const zoneId = await createZone(ledge, zone);
  const pool = await createPool(ledge, 'p', [origin]);
  await createLoadBalancer(ledge, zoneId, { name: host, default_pools: [pool], fallback_pool: pool });
  return zoneId;
}

describe('ACME certificates from pebble', () => {
  it('orders one by HTTP-01 for a load balancer, serves it over HTTPS, and renews it before expiry', async () => {
    const host = 'shop.acme-http.test';
    const zoneId = await serveSite(http01, 'acme-http.test', host);
    const first = await waitFor(() => servedCertificate(http01, zoneId), 'the HTTP-01 certificate', {
      timeoutMs: 30_000,
    });
    expect(first.hosts).toEqual([host]);
    expect(first.validation_errors).toEqual([]);
    const rootFile = pebble.rootFile;
    const port = http01.server.platform.traffic.tlsPort!;
    const answer = await curl(`https://${host}:${port}/`, host, port, ['--cacert', rootFile, '--http2']);
    expect(answer.stderr).toBe('');
    expect([answer.code, answer.httpVersion]).toEqual([200, '2']);
    // A 30 s certificate is renewed once a third of its life is left.
    const renewed = await waitFor(
      async () => {
        const pack = await servedCertificate(http01, zoneId);
        return pack && pack.primary_certificate !== first.primary_certificate ? pack : undefined;
      },
      'the renewal',
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(Date.parse(renewed.certificates[0].expires_on)).toBeGreaterThan(
      Date.parse(first.certificates[0].expires_on),
    );
    const again = await curl(`https://${host}:${port}/`, host, port, ['--cacert', rootFile]);
    expect(again.code).toBe(200);
    // The ACME account key is the installation's one, sealed.
    const accounts = await http01.server.platform.db.all<{ sealed_key: string }>(
      'SELECT sealed_key FROM tls_acme_account',
    );
    expect(accounts.length).toBe(1);
    expect(accounts[0]!.sealed_key).not.toContain('PRIVATE KEY');
    expect(logs.join('\n')).not.toMatch(/BEGIN (EC )?PRIVATE KEY/);
  });

  it('orders one by TLS-ALPN-01, and Chromium loads the site over HTTPS', async () => {
    const host = 'www.acme-alpn.test';
    const zoneId = await serveSite(alpn01, 'acme-alpn.test', host);
    const pack = await waitFor(() => servedCertificate(alpn01, zoneId), 'the TLS-ALPN-01 certificate', {
      timeoutMs: 30_000,
    });
    // Chromium trusts pebble's root as a person would add a CA: in the NSS database of its user's home
    // (a throwaway HOME), through NSS's certutil. No pin and no ignored errors: the chain must verify.
    const home = tempDir('ledge-chromium-home-');
    const nssdb = `sql:${join(home, '.pki', 'nssdb')}`;
    mkdirSync(join(home, '.pki', 'nssdb'), { recursive: true });
    execFileSync('certutil', ['-N', '-d', nssdb, '--empty-password']);
    execFileSync('certutil', ['-A', '-d', nssdb, '-n', 'Pebble test root', '-t', 'C,,', '-i', pebble.rootFile]);
    const port = alpn01.server.platform.traffic.tlsPort!;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      env: { ...process.env, HOME: home },
      args: ['--no-sandbox', '--disable-dev-shm-usage', `--host-resolver-rules=MAP ${host} 127.0.0.1`],
    });
    try {
      const page = await browser.newPage();
      const response = await page.goto(`https://${host}:${port}/page`);
      expect(response?.status()).toBe(200);
      expect(await response?.headerValue('x-origin')).toBe('origin-acme');
      const security = await response?.securityDetails();
      expect(security?.protocol).toMatch(/TLS 1\.[23]/);
      expect(security?.subjectName).toBe(host);
      expect(security?.issuer).toMatch(/Pebble/);
      expect(pack.certificates[0].issuer).toMatch(/Pebble/);
    } finally {
      await browser.close();
    }
  });
});
