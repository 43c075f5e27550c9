import { expect } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { makeCertificate } from './helpers.ts';

/** A Ledge whose traffic TLS port serves one load balancer, at `host`, with a certificate uploaded for it. */
export interface TlsLoadBalancer {
  ledge: TestLedge;
  origin: NamedOrigin;
  /** The certificate uploaded, with its test CA's file for clients that trust it. */
  cert: ReturnType<typeof makeCertificate>;
  close(): Promise<void>;
}

/**
 * Starts it with the headers timeout, the TLS handshake's bound, at 1 s. The zone is `host` without its first
 * label; the pool has one origin.
 */
export async function startTlsLoadBalancer(host: string): Promise<TlsLoadBalancer> {
  const cert = makeCertificate([host]);
  const ledge = await startLedge({ env: { LEDGE_HTTP_HEADERS_TIMEOUT_MS: '1000' } });
  const origin = await NamedOrigin.start('o');
  const zoneId = await createZone(ledge, host.slice(host.indexOf('.') + 1));
  const pool = await createPool(ledge, 'p', [origin]);
  await createLoadBalancer(ledge, zoneId, { name: host, default_pools: [pool], fallback_pool: pool });
  const uploaded = await fetch(`${ledge.apiUrl}/zones/${zoneId}/custom_certificates`, {
    method: 'POST',
    headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ certificate: cert.certificate, private_key: cert.privateKey }),
  });
  expect(uploaded.status).toBe(200);
  return {
    ledge,
    origin,
    cert,
    close: async () => {
      await ledge.close();
      await origin.stop();
    },
  };
}
