import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketRecord } from '../../src/storage/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { startWorkerd, type RunningWorkerd } from './workerd-harness.ts';

const MiB = 1024 * 1024;
let ledge: TestLedge;
let workerd: RunningWorkerd;
let bucket: BucketRecord;

beforeAll(async () => {
  ledge = await startLedge();
  const storage = ledge.server.platform.storage;
  bucket = await storage.buckets.create(ledge.accountId, { name: 'binding-test' });
  const backend = ledge.server.platform.r2Backend;
  workerd = await startWorkerd(
    join(import.meta.dirname, 'fixtures/binding-worker.js'),
    backend.workerdService(ledge.accountId, 'binding-test'),
  );
});

afterAll(async () => {
  await workerd?.stop();
  await ledge?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(scenario: string, init?: RequestInit): Promise<any> {
  const response = await fetch(`${workerd.url}/${scenario}`, init);
  expect(response.status, workerd.stderr()).toBe(200);
  return response.json();
}

const md5 = (data: string | Buffer) => createHash('md5').update(data).digest('hex');

describe('R2 binding through real workerd', () => {
  it('puts, gets and heads a non-ASCII key with http and custom metadata', async () => {
    const r = await run('roundtrip');
    expect(r.error).toBeUndefined();
    expect(r.text).toBe('hello, wörld');
    expect(r.put).toMatchObject({
      key: 'ключ/日本語 ✓.txt',
      size: Buffer.byteLength('hello, wörld'),
      etag: md5('hello, wörld'),
      md5: md5('hello, wörld'),
      storageClass: 'Standard',
    });
    expect(r.put.httpEtag).toBe(`"${r.put.etag}"`);
    expect(r.get).toMatchObject({
      key: r.put.key,
      version: r.put.version,
      customMetadata: { owner: 'zoë', n: '1' },
      hasBody: true,
    });
    expect(r.head).toMatchObject({ key: r.put.key, etag: r.put.etag, uploaded: r.put.uploaded, hasBody: false });
    expect(r.headers).toEqual({
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'max-age=60',
      'content-language': 'de',
    });
    const stored = await ledge.server.platform.storage.objects.head(bucket, 'ключ/日本語 ✓.txt');
    expect(stored?.size).toBe(Buffer.byteLength('hello, wörld'));
  });

  it('stores empty objects', async () => {
    const r = await run('empty');
    expect(r.fromNull).toMatchObject({ size: 0, etag: md5('') });
    expect(r.fromString).toMatchObject({ size: 0, etag: md5('') });
    expect(r.text).toBe('');
  });

  it('keeps the storage class and the cache expiry of an object', async () => {
    const r = await run('empty');
    expect(r.infrequent.storageClass).toBe('InfrequentAccess');
    expect(r.expiry).toBe(1445412480000);
    expect(r.headers).toEqual({ 'content-disposition': 'attachment', expires: new Date(1445412480000).toUTCString() });
  });

  it('resolves get and head of a missing key to null', async () => {
    expect(await run('missing')).toEqual({ get: null, head: null });
  });

  it('serves object ranges and header ranges; an offset past the end is InvalidRange (10039)', async () => {
    const r = await run('ranges');
    expect(r.offsetLength).toEqual({ text: '123', range: { offset: 1, length: 3 } });
    expect(r.offsetOnly.text).toBe('789');
    expect(r.lengthOnly.text).toBe('01');
    expect(r.suffix.text).toBe('89');
    expect(r.suffixClamped.text).toBe('0123456789');
    expect(r.header.text).toBe('234');
    expect(r.headerUnsatisfiable.text).toBe('0123456789');
    expect(r.headerMulti.text).toBe('0123456789');
    expect(r.offsetPastEnd.error).toMatch(/\(10039\)/);
  });

  it('lists more than 1000 keys with cursors, startAfter and limit', async () => {
    const storage = ledge.server.platform.storage;
    const keys = Array.from({ length: 1105 }, (_, i) => `many/${String(i).padStart(5, '0')}`);
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(
        keys.slice(i, i + 50).map((key) => storage.objects.put(bucket, key, Readable.from([Buffer.from(key)]))),
      );
    }
    const r = await run('listMany');
    expect(r.pages).toEqual([
      { count: 1000, truncated: true, hasCursor: true, first: 'many/00000' },
      { count: 105, truncated: false, hasCursor: false, first: 'many/01000' },
    ]);
    expect(r.limited).toEqual(keys.slice(11, 18));
    expect(r.limitedTruncated).toBe(true);
  });

  it('folds keys into delimited prefixes that count against the limit, and honours include', async () => {
    const r = await run('delimiters');
    expect(r.top).toEqual({ objects: ['tree/c'], prefixes: ['tree/a/', 'tree/b/', 'tree/d/'], truncated: false });
    expect(r.paged).toEqual([
      { objects: [], prefixes: ['tree/a/', 'tree/b/'], truncated: true },
      { objects: ['tree/c'], prefixes: ['tree/d/'], truncated: false },
    ]);
    expect(r.withMeta).toEqual({ k: 'tree/c' });
    // Not included: an empty object, as on R2 (never undefined).
    expect(r.withoutMeta).toEqual({});
  });

  it('completes a 3-part multipart upload with 5 MiB+ parts into an N-etag object', async () => {
    const r = await run('multipart');
    expect(r.error).toBeUndefined();
    // The object's etag is made of the parts' md5s; the parts' own etags are per upload (issue 28).
    const partMd5s = r.partMd5s.map((e: string) => Buffer.from(e, 'hex'));
    expect(r.partEtags).not.toContain(r.partMd5s[0]);
    expect(r.object).toMatchObject({
      key: 'big/multi.bin',
      size: 2 * (5 * MiB + 1) + 1234,
      customMetadata: { parts: '3' },
    });
    expect(r.object.etag).toBe(`${md5(Buffer.concat(partMd5s))}-3`);
    expect(r.got).toMatchObject({
      etag: r.object.etag,
      size: r.object.size,
      httpMetadata: { contentType: 'application/x-test' },
    });
    expect(r.sameBytes).toBe(true);
    expect(r.rangedBytes).toEqual(r.expectedRange);
  });

  it('refuses wrong part etags (10025), small parts (10011), finished uploads (10024), unknown ones (10001)', async () => {
    const r = await run('multipartErrors');
    expect(r.wrongEtag.error).toMatch(/\(10025\)/);
    expect(r.tooSmall.error).toMatch(/\(10011\)/);
    expect(r.aborted).toBe('aborted');
    expect(r.afterAbort.error).toMatch(/\(10024\)/);
    expect(r.unknown.error).toMatch(/\(10001\)/);
    expect(r.object).toBeNull();
  });

  it('applies onlyIf on put (null) and get (metadata without body)', async () => {
    const r = await run('preconditions');
    expect(r.error).toBeUndefined();
    expect(r.putWrongEtag).toBeNull();
    expect(r.putRightEtag.etag).toBe(md5('v3'));
    expect(r.putIfAbsent).toBeNull();
    expect(r.getNotMatching).toMatchObject({ etag: md5('v3'), hasBody: false });
    expect(r.getMatching).toMatchObject({ hasBody: true, text: 'v3' });
    expect(r.getOld).toMatchObject({ hasBody: false });
    expect(r.getAfterFuture).toMatchObject({ hasBody: false });
    expect(r.finalText).toBe('v3');
  });

  it('refuses bad input with the R2 codes and stores nothing', async () => {
    const r = await run('badInput');
    expect(r.longKey.error).toBe('put: The specified object name is not valid. (10020)');
    expect(r.longKeyStored).toBeNull();
    expect(r.exactKey).toBe(512);
    expect(r.bigMetadata.error).toMatch(/metadata.*\(10012\)/i);
    expect(r.metadataStored).toBeNull();
    expect(r.badMd5.error).toMatch(/\(10037\)/);
    expect(r.goodMd5).toBe(md5('payload'));
    expect(r.badSha256.error).toMatch(/\(10037\)/);
    expect(r.digestStored).toBeNull();
    expect(r.badLimit.error).toBe('list: MaxKeys params must be positive integer <= 1000. (10022)');
    expect(r.zeroLimit.error).toMatch(/\(10022\)/);
  });

  it('deletes one key or a list of keys; more than 1000 is refused', async () => {
    const r = await run('deletes');
    expect(r.left).toEqual(['del/4']);
    expect(r.tooMany.error).toMatch(/^delete: .*1000.*\(10040\)$/);
  });

  it('streams a request body straight into put', async () => {
    const payload = Buffer.alloc(3 * MiB + 17, 7);
    const r = await run('stream', {
      method: 'PUT',
      body: payload,
      headers: { 'content-length': String(payload.length) },
    });
    expect(r).toEqual({
      size: payload.length,
      etag: md5(payload),
      sha256: createHash('sha256').update(payload).digest('hex'),
    });
  });
});
