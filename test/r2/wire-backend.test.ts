import { Agent, request } from 'node:http';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUCKET_HEADER, SECRET_HEADER } from '../../src/r2/index.ts';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
let socketPath: string;
let secret: string;

beforeAll(async () => {
  // A stale socket file from a crashed run must not stop the backend from starting.
  const dataDir = tempDir();
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(dataDir, 'runtime'), { recursive: true });
  writeFileSync(join(dataDir, 'runtime', 'r2.sock'), 'stale');
  ledge = await startLedge({ dataDir });
  await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'wire' });
  const service = ledge.server.platform.r2Backend.workerdService(ledge.accountId, 'wire');
  socketPath = service.address.replace(/^unix:/, '');
  secret = service.injectRequestHeaders.find((h) => h.name === SECRET_HEADER)!.value;
});
afterAll(async () => ledge?.close());

function call(headers: Record<string, string>, method = 'GET', body?: Buffer) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request({ socketPath, path: '/', method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end(body);
    },
  );
}

const head = (key: string) => JSON.stringify({ version: 1, method: 'head', object: key });

describe('R2 wire backend', () => {
  it('listens on <dataDir>/runtime/r2.sock with mode 0600, replacing a stale socket file', () => {
    expect(socketPath).toBe(join(ledge.dataDir, 'runtime', 'r2.sock'));
    const info = statSync(socketPath);
    expect(info.isSocket()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
  });

  it('refuses a request without the per-boot secret (403)', async () => {
    const response = await call({ [BUCKET_HEADER]: `${ledge.accountId}/wire`, 'cf-r2-request': head('k') });
    expect(response.status).toBe(403);
    expect(JSON.parse(String(response.headers['cf-r2-error'])).v4code).toBe(10003);
  });

  it('refuses a wrong secret (403)', async () => {
    const response = await call({
      [BUCKET_HEADER]: `${ledge.accountId}/wire`,
      [SECRET_HEADER]: `${secret}x`,
      'cf-r2-request': head('k'),
    });
    expect(response.status).toBe(403);
  });

  it('refuses a missing bucket identity (403) and an unknown bucket (404/10006)', async () => {
    expect((await call({ [SECRET_HEADER]: secret, 'cf-r2-request': head('k') })).status).toBe(403);
    const unknown = await call({
      [BUCKET_HEADER]: `${ledge.accountId}/nope`,
      [SECRET_HEADER]: secret,
      'cf-r2-request': head('k'),
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(String(unknown.headers['cf-r2-error'])).v4code).toBe(10006);
  });

  it('answers a missing key with 404/10007 and malformed requests with 400', async () => {
    const ok = { [BUCKET_HEADER]: `${ledge.accountId}/wire`, [SECRET_HEADER]: secret };
    const missing = await call({ ...ok, 'cf-r2-request': head('k') });
    expect(missing.status).toBe(404);
    expect(JSON.parse(String(missing.headers['cf-r2-error'])).v4code).toBe(10007);
    const bad = await call({ ...ok, 'cf-r2-request': '{"version":1,"method":"explode"}' });
    expect(bad.status).toBe(400);
    const noHeader = await call(ok);
    expect(noHeader.status).toBe(400);
  });

  it('decodes raw UTF-8 in cf-r2-request (non-ASCII keys) and requires cf-r2-metadata-size on head', async () => {
    const ok = { [BUCKET_HEADER]: `${ledge.accountId}/wire`, [SECRET_HEADER]: secret };
    const metadata = Buffer.from(JSON.stringify({ version: 1, method: 'put', object: 'schlüssel' }));
    const value = Buffer.from('wert');
    const put = await call(
      {
        ...ok,
        'cf-r2-metadata-size': String(metadata.length),
        'content-length': String(metadata.length + value.length),
      },
      'PUT',
      Buffer.concat([metadata, value]),
    );
    expect(put.status).toBe(200);
    expect(JSON.parse(put.body.toString())).toMatchObject({ name: 'schlüssel', size: '4' });
    const raw = Buffer.from(head('schlüssel'), 'utf8').toString('latin1');
    const found = await call({ ...ok, 'cf-r2-request': raw });
    expect(found.status).toBe(200);
    expect(Number(found.headers['cf-r2-metadata-size'])).toBe(found.body.length);
    expect(JSON.parse(found.body.toString()).name).toBe('schlüssel');
  });

  describe('a refused write', () => {
    const MiB = 1024 * 1024;
    const longKey = 'k'.repeat(1025);

    /** Sends a PUT with the given JSON and value (or only `sent` bytes of a longer declared body). */
    function put(options: {
      json: unknown;
      value: Buffer;
      agent?: Agent;
      headers?: Record<string, string>;
      declared?: number;
    }) {
      const metadata = Buffer.from(JSON.stringify(options.json));
      const declared = options.declared ?? metadata.length + options.value.length;
      const agent = options.agent ?? new Agent({ keepAlive: true });
      const done = new Promise<{ status: number; code: number; connection: string | undefined; reused: boolean }>(
        (resolve, reject) => {
          const req = request(
            {
              socketPath,
              path: '/',
              method: 'PUT',
              // Keep-alive asked for every time: `connection: close` in an answer is the server's choice.
              agent,
              headers: {
                'cf-r2-metadata-size': String(metadata.length),
                'content-length': String(declared),
                ...(options.headers ?? { [BUCKET_HEADER]: `${ledge.accountId}/wire`, [SECRET_HEADER]: secret }),
              },
            },
            (res) => {
              res.resume();
              res.on('end', () =>
                resolve({
                  status: res.statusCode!,
                  code: JSON.parse(String(res.headers['cf-r2-error'] ?? '{}')).v4code,
                  connection: res.headers.connection,
                  reused: req.reusedSocket,
                }),
              );
            },
          );
          req.on('error', reject);
          req.write(metadata);
          if (options.declared === undefined) req.end(options.value);
          else req.write(options.value);
        },
      );
      return options.agent ? done : done.finally(() => agent.destroy());
    }

    it('reads and drops the rest of the value, answers R2 code and keeps the connection', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const value = Buffer.alloc(3 * MiB, 1);
        const first = await put({ agent, json: { version: 1, method: 'put', object: longKey }, value });
        expect(first).toMatchObject({ status: 400, code: 10020, connection: 'keep-alive', reused: false });
        const unknownUpload = { version: 1, method: 'uploadPart', object: 'm', uploadId: 'nope', partNumber: 1 };
        const second = await put({ agent, json: unknownUpload, value });
        expect(second).toMatchObject({ status: 404, code: 10024, connection: 'keep-alive', reused: true });
        const deletedBucket = { [BUCKET_HEADER]: `${ledge.accountId}/gone`, [SECRET_HEADER]: secret };
        const third = await put({
          agent,
          json: { version: 1, method: 'put', object: 'k' },
          value,
          headers: deletedBucket,
        });
        expect(third).toMatchObject({ status: 404, code: 10006, connection: 'keep-alive', reused: true });
      } finally {
        agent.destroy();
      }
      const bucket = (await ledge.server.platform.storage.getBucket(ledge.accountId, 'wire'))!;
      expect((await ledge.server.platform.storage.list(bucket, {})).objects.map((o) => o.key)).not.toContain(longKey);
    });

    it('drains nothing for a caller without the secret, nor past the largest write: it closes instead', async () => {
      const value = Buffer.alloc(3 * MiB, 1);
      const stranger = await put({
        json: { version: 1, method: 'put', object: 'k' },
        value,
        headers: { [BUCKET_HEADER]: `${ledge.accountId}/wire` },
      });
      expect(stranger).toMatchObject({ status: 403, code: 10003, connection: 'close' });
      // 6 GiB declared, a few bytes sent: refused on its key at once, without waiting for the rest.
      const huge = await put({
        json: { version: 1, method: 'put', object: longKey },
        value: Buffer.alloc(1024),
        declared: 6 * 1024 * MiB,
      });
      expect(huge).toMatchObject({ status: 400, code: 10020, connection: 'close' });
    });

    it('refuses request JSON over 32 MiB (10012) and keeps the connection', async () => {
      const json = { version: 1, method: 'put', object: 'k', customFields: [{ k: 'a', v: 'x'.repeat(33 * MiB) }] };
      const response = await put({ json, value: Buffer.alloc(0) });
      expect(response).toMatchObject({ status: 400, code: 10012, connection: 'keep-alive' });
    });
  });
});
