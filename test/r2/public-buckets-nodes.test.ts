import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { call } from '../notifications/api-helpers.ts';

/**
 * Public bucket hostnames on several nodes (one PostgreSQL database): a change made through one node is
 * served by the others' traffic ports at once (the `r2_public_hosts` notice), not after the 30 s reload.
 */
describe('public buckets on two nodes', () => {
  let a: TestLedge;
  let b: TestLedge;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    const env = { LEDGE_SECRET_KEY: randomBytes(32).toString('base64') };
    a = await startLedge({ flags: { databaseUrl: database.url }, env });
    b = await startLedge({ flags: { databaseUrl: database.url }, env });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await drop?.();
  });

  const body = (node: TestLedge, host: string, path: string) =>
    new Promise<string>((resolve, reject) => {
      const port = node.server.platform.traffic.port!;
      const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(`${res.statusCode} ${Buffer.concat(chunks).toString()}`));
      });
      req.on('error', reject);
      req.end();
    });

  it('serves on every node what one node switched on or connected, and stops everywhere', async () => {
    const bucketPath = `/accounts/${a.accountId}/r2/buckets/shared`;
    expect((await call(a, 'POST', `/accounts/${a.accountId}/r2/buckets`, { name: 'shared' })).status).toBe(200);
    // Small bodies live in the database rows, so both nodes read them (the nodes' blob dirs are their own).
    const put = await fetch(`${a.apiUrl}${bucketPath}/objects/hello.txt`, {
      method: 'PUT',
      headers: a.tokenHeaders,
      body: 'from node a',
    });
    expect(put.status).toBe(200);

    const managed = await call(a, 'PUT', `${bucketPath}/domains/managed`, { enabled: true });
    const host = (managed.body.result as { domain: string }).domain;
    await vi.waitFor(async () => expect(await body(b, host, '/hello.txt')).toBe('200 from node a'), {
      timeout: 30_000,
      interval: 100,
    });
    await call(a, 'PUT', `${bucketPath}/domains/managed`, { enabled: false });
    await vi.waitFor(async () => expect(await body(b, host, '/hello.txt')).not.toBe('200 from node a'), {
      timeout: 30_000,
      interval: 100,
    });

    const zone = await call(b, 'POST', '/zones', { name: 'nodes.test', account: { id: b.accountId } });
    const zoneId = (zone.body.result as { id: string }).id;
    const custom = await call(b, 'POST', `${bucketPath}/domains/custom`, { domain: 'cdn.nodes.test', zoneId });
    expect(custom.status).toBe(200);
    expect(await body(b, 'cdn.nodes.test', '/hello.txt')).toBe('200 from node a');
    await vi.waitFor(async () => expect(await body(a, 'cdn.nodes.test', '/hello.txt')).toBe('200 from node a'), {
      timeout: 30_000,
      interval: 100,
    });
  });
});
