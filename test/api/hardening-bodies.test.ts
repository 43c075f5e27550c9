import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { spawnLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { AUTH, peakRssDuring, rssBytes, streamBody, uploadHead } from './hardening-helpers.ts';

const MiB = 1024 * 1024;
const ACCOUNT = `/accounts/${TEST_CREDENTIALS.accountId}`;
/** The upload limit the server's settings give the workers subsystem from this environment. */
const scriptUploadLimit = (env: NodeJS.ProcessEnv) => resolveServerConfig({}, env).workers.uploadLimit;

/**
 * Issue 12, point 2: bodies are limited while they stream, whatever the framing. The server runs as
 * its own process so that its resident memory can be watched from /proc.
 */
describe('request bodies are capped while they stream', () => {
  let ledge: SpawnedLedge;
  let pid: number;

  beforeAll(async () => {
    ledge = await spawnLedge(tempDir(), ['--functions-processes', '1']);
    pid = ledge.child.pid!;
  });
  afterAll(async () => {
    await ledge?.stop();
  });

  it('refuses a 200 MiB chunked script upload with 413 without the server growing by 50 MiB', async () => {
    const boundary = 'ledge-hardening-boundary';
    const before = rssBytes(pid);
    const { result, peak } = await peakRssDuring(pid, () =>
      streamBody(`${ledge.apiUrl}${ACCOUNT}/workers/scripts/huge`, {
        method: 'PUT',
        headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` },
        head: uploadHead(boundary),
        fillBytes: 200 * MiB,
      }),
    );
    expect(result.status).toBe(413);
    const envelope = JSON.parse(result.text);
    expect(envelope).toMatchObject({ success: false, errors: [{ code: 10027 }], result: null });
    expect(envelope.errors[0].message).toMatch(/10485760 bytes/);
    // Refused at the limit (10 MiB), long before the 200 MiB were sent.
    expect(result.sent).toBeLessThan(100 * MiB);
    expect(peak - before).toBeLessThan(50 * MiB);
    // The refused script left nothing behind.
    const after = await fetch(`${ledge.apiUrl}${ACCOUNT}/workers/scripts/huge/settings`, { headers: AUTH });
    expect(after.status).toBe(404);
  });

  it("takes the script upload limit from LEDGE_SCRIPT_UPLOAD_LIMIT, up to Cloudflare's 64 MiB", () => {
    expect(scriptUploadLimit({})).toBe(10 * MiB);
    expect(scriptUploadLimit({ LEDGE_SCRIPT_UPLOAD_LIMIT: String(25 * MiB) })).toBe(25 * MiB);
    expect(() => scriptUploadLimit({ LEDGE_SCRIPT_UPLOAD_LIMIT: String(65 * MiB) })).toThrow(/64 MiB|67108864/);
    expect(() => scriptUploadLimit({ LEDGE_SCRIPT_UPLOAD_LIMIT: 'lots' })).toThrow(/LEDGE_SCRIPT_UPLOAD_LIMIT/);
  });

  it('refuses a declared Content-Length above the limit before reading the body', async () => {
    const started = Date.now();
    const result = await streamBody(`${ledge.apiUrl}${ACCOUNT}/workers/scripts/huge`, {
      method: 'PUT',
      headers: { ...AUTH, 'content-type': 'multipart/form-data; boundary=x', 'content-length': 200 * MiB },
      fillBytes: 0,
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.text).errors[0].code).toBe(10027);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('caps JSON bodies at 10 MiB while a chunked body streams in', async () => {
    const before = rssBytes(pid);
    const { result, peak } = await peakRssDuring(pid, () =>
      streamBody(`${ledge.apiUrl}${ACCOUNT}/r2/buckets`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        head: '{"name":"',
        fillBytes: 100 * MiB,
      }),
    );
    expect(result.status).toBe(413);
    expect(JSON.parse(result.text)).toMatchObject({ success: false, errors: [{ code: 1013 }] });
    expect(result.sent).toBeLessThan(60 * MiB);
    expect(peak - before).toBeLessThan(50 * MiB);
  });

  // The bug: the 413 went out and the socket closed with the body still arriving, so the kernel reset the
  // connection and a client still writing got EPIPE instead of the answer (1 run in ~20 of CI).
  it('lets a client that is still sending read the 413 (the refused connection lingers)', async () => {
    for (let round = 0; round < 8; round++) {
      const result = await streamBody(`${ledge.apiUrl}${ACCOUNT}/r2/buckets`, {
        method: 'POST',
        headers: { ...AUTH, 'content-type': 'application/json' },
        head: '{"name":"',
        fillBytes: 40 * MiB,
      });
      expect(result.status).toBe(413);
    }
  });

  it('streams a 256 MiB chunked object upload to disk instead of buffering it', async () => {
    const created = await fetch(`${ledge.apiUrl}${ACCOUNT}/r2/buckets`, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'big-bodies' }),
    });
    expect(created.status).toBe(200);
    const size = 256 * MiB;
    const before = rssBytes(pid);
    const { result, peak } = await peakRssDuring(pid, () =>
      streamBody(`${ledge.apiUrl}${ACCOUNT}/r2/buckets/big-bodies/objects/big.bin`, {
        method: 'PUT',
        headers: { ...AUTH, 'content-type': 'application/octet-stream' },
        fillBytes: size,
      }),
    );
    expect(result.status).toBe(200);
    const md5 = createHash('md5');
    const filler = Buffer.alloc(MiB, 0x61);
    for (let i = 0; i < 256; i++) md5.update(filler);
    expect(JSON.parse(result.text).result).toMatchObject({
      key: 'big.bin',
      size: String(size),
      etag: md5.digest('hex'),
    });
    expect(peak - before).toBeLessThan(50 * MiB);
  });
});
