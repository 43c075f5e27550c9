import { randomBytes, X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { freePort } from '../helpers/free-port.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { createLoadBalancer, createPool, createZone, NamedOrigin } from '../load-balancing/traffic-helpers.ts';
import { curl } from './helpers.ts';
import { startPebble, type Pebble } from './pebble.ts';

/**
 * Three Ledge nodes on one PostgreSQL database, all ordering from pebble at once: the `tls-acme-orders` job
 * lease lets one node order at a time, so the hostname gets one certificate, from the lease's holder; the
 * HTTP-01 challenge is answered by whichever node pebble reaches (only node 1 listens on pebble's HTTP port),
 * and every node serves the certificate from the database.
 */
const HOST = 'www.nodes.test';
let pebble: Pebble;
let database: { url: string; drop(): Promise<void> };
let origin: NamedOrigin;
const nodes: TestLedge[] = [];
const logs: string[][] = [[], [], []];

beforeAll(async () => {
  const [http01Port, tlsPort] = [await freePort(), await freePort()];
  // An hour: no renewal during the test, so every certificate seen was a first order.
  pebble = await startPebble({ httpPort: http01Port, tlsPort, validitySeconds: 3600 });
  database = await freshPostgresDatabase();
  const secretKey = randomBytes(32).toString('base64');
  for (let i = 0; i < 3; i++) {
    nodes.push(
      await startLedge({
        flags: { databaseUrl: database.url, ...(i === 0 ? { trafficPort: http01Port } : {}) },
        env: {
          LEDGE_SECRET_KEY: secretKey,
          LEDGE_NODE_ID: `node-${i + 1}`,
          LEDGE_CLUSTER_HEARTBEAT_MS: '500',
          LEDGE_ACME_DIRECTORY_URL: pebble.directoryUrl,
          LEDGE_ACME_CA_FILE: pebble.directoryCaFile,
          LEDGE_ACME_INTERVAL_MS: '300',
          LEDGE_ACME_RETRY_MS: '300',
        },
        logger: createLogger('info', systemClock, {}, (line) => void logs[i]!.push(line)),
      }),
    );
  }
  origin = await NamedOrigin.start('origin-nodes');
});

afterAll(async () => {
  for (const node of nodes) await node.close();
  await origin?.stop();
  pebble?.stop();
  await database?.drop();
});

/** The certificate a node's TLS port presents for HOST, checked against pebble's root. */
function presented(node: TestLedge): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port: node.server.platform.traffic.tlsPort!, servername: HOST, ca: pebble.root },
      () => {
        const raw = socket.getPeerCertificate().raw;
        socket.destroy();
        resolve(new X509Certificate(raw));
      },
    );
    socket.on('error', reject);
  });
}

it('orders a hostname once across three nodes, and every node serves it', { timeout: 120_000 }, async () => {
  const zoneId = await createZone(nodes[1]!, 'nodes.test');
  const pool = await createPool(nodes[1]!, 'p', [origin]);
  await createLoadBalancer(nodes[1]!, zoneId, { name: HOST, default_pools: [pool], fallback_pool: pool });

  const served = await waitFor(
    async () => {
      const certificates = await Promise.all(nodes.map((node) => presented(node).catch(() => undefined)));
      return certificates.every((c) => c !== undefined) ? (certificates as X509Certificate[]) : undefined;
    },
    'every node to serve the ACME certificate',
    { timeoutMs: 90_000, everyMs: 500 },
  );
  // One certificate, the same on every node, issued by pebble for the name.
  expect(new Set(served.map((c) => c.fingerprint256)).size).toBe(1);
  expect(served[0]!.subjectAltName).toBe(`DNS:${HOST}`);
  expect(served[0]!.issuer).toMatch(/Pebble/);
  const stored = await nodes[0]!.server.platform.db.all<{ id: string }>(
    "SELECT id FROM tls_certificates WHERE source = 'acme'",
  );
  expect(stored).toHaveLength(1);
  // Ordered by one node only: the one that held the job lease.
  const issuedBy = logs.map((lines) => lines.filter((l) => l.includes('ACME certificate issued')).length);
  expect(issuedBy.reduce((a, b) => a + b)).toBe(1);
  const lease = await nodes[0]!.server.platform.db.get<{ holder: string }>(
    "SELECT holder FROM cluster_leases WHERE name = 'tls-acme-orders'",
  );
  expect(lease?.holder).toBe(`node-${issuedBy.indexOf(1) + 1}`);
  // The nodes that did not hold the lease never started an order.
  for (const [i, lines] of logs.entries()) {
    if (issuedBy[i] === 0) expect(lines.filter((l) => l.includes('ACME order failed'))).toEqual([]);
  }
  // A real client over HTTPS (HTTP/2) on each node, trusting pebble's root.
  for (const node of nodes) {
    const port = node.server.platform.traffic.tlsPort!;
    const answer = await curl(`https://${HOST}:${port}/`, HOST, port, ['--cacert', pebble.rootFile, '--http2']);
    expect([answer.code, answer.httpVersion, answer.stderr]).toEqual([200, '2', '']);
  }
});
