import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketRecord } from '../../src/storage/index.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { startMiniflare, type RunningMiniflare } from './miniflare-harness.ts';
import { startWorkerd, type RunningWorkerd } from './workerd-harness.ts';

const WORKER = join(import.meta.dirname, 'fixtures/binding-fidelity-worker.js');
const KiB = 1024;
const MiB = 1024 * KiB;

let ledge: TestLedge;
let workerd: RunningWorkerd;
let miniflare: RunningMiniflare;
let bucket: BucketRecord;

beforeAll(async () => {
  ledge = await startLedge();
  bucket = await ledge.server.platform.storage.buckets.create(ledge.accountId, { name: 'fidelity' });
  workerd = await startWorkerd(WORKER, ledge.server.platform.r2Backend.workerdService(ledge.accountId, 'fidelity'));
  miniflare = await startMiniflare(WORKER);
});

afterAll(async () => {
  await miniflare?.stop();
  await workerd?.stop();
  await ledge?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function onBoth(scenario: string): Promise<{ ledge: any; miniflare: any }> {
  const [fromLedge, fromMiniflare] = await Promise.all([
    fetch(`${workerd.url}/${scenario}`),
    miniflare.fetch(scenario),
  ]);
  expect(fromLedge.status, workerd.stderr()).toBe(200);
  expect(fromMiniflare.status).toBe(200);
  return { ledge: await fromLedge.json(), miniflare: await fromMiniflare.json() };
}

/** Where Ledge follows real R2 rather than the simulator: the storage class R2 reports. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function asOnR2(value: any): any {
  return JSON.parse(JSON.stringify(value).replaceAll('"storageClass":""', '"storageClass":"Standard"'));
}

describe('R2 binding fidelity (Ledge on workerd vs Miniflare)', () => {
  it.each([1 * KiB, 2 * MiB, 20 * MiB])(
    'gives R2 results, never a lost connection, for refused writes with %i-byte bodies, storing nothing',
    async (size) => {
      const { ledge: got, miniflare: expected } = await onBoth(`refusals?size=${size}`);
      expect(got.onlyIf).toBeNull();
      expect(got.longKey).toEqual({ error: 'put: The specified object name is not valid. (10020)' });
      expect(got.bigMetadata).toEqual({
        error: 'put: Your metadata headers exceed the maximum allowed metadata size. (10012)',
      });
      expect(got.unknownUploadPart).toEqual({
        error: 'uploadPart: The specified multipart upload does not exist. (10024)',
      });
      // An upload id the key never had: 10001, as Miniflare (NoSuchUpload, 10024, is for a finished upload:
      // test/r2/r2-fidelity.test.ts). Whatever the body's size, the answer arrives.
      expect(got.unknownComplete).toEqual({
        error: 'completeMultipartUpload: We encountered an internal error. Please try again. (10001)',
      });
      expect(got).toEqual(expected);
      const stored = (await ledge.server.platform.storage.list(bucket, {})).objects.map((o) => o.key);
      expect(stored.filter((key) => key.startsWith('refused-') || key.startsWith('kkk'))).toEqual([]);
      expect(stored).toContain('after');
    },
    60_000,
  );

  it('sets range on every get and head, refuses an empty suffix as InvalidRange', async () => {
    const { ledge: got, miniflare: expected } = await onBoth('ranges');
    expect(got.head).toEqual({ offset: 0, length: 10 });
    expect(got.whole.range).toEqual({ offset: 0, length: 10 });
    expect(got.headerMulti).toEqual({ range: { offset: 0, length: 10 }, text: '0123456789' });
    expect(got.emptyObject).toEqual({ range: { offset: 0, length: 0 }, head: { offset: 0, length: 0 } });
    expect(got.suffixZero).toEqual({ error: 'get: The requested range is not satisfiable (10039)' });
    expect(got).toEqual(asOnR2(expected));
  });

  it('gives a re-uploaded part a new etag even for the same bytes; its superseded etag fails with 10025', async () => {
    const { ledge: got, miniflare: expected } = await onBoth('parts');
    expect(got.sameBytesSameEtag).toBe(false);
    expect(got.samePartNumberElsewhere).toBe(false);
    expect(got.etags.again).toMatch(/^\S{16,}$/);
    expect(got.superseded).toEqual({
      error: 'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
    });
    // The object's etag still comes from the parts' md5s: the same as Miniflare's for the same bytes.
    expect(got.completed).toEqual({ size: 10, etag: expected.completed.etag });
    expect(got.text).toBe('same bytes');
    const { etags: _l, ...rest } = got;
    const { etags: _m, ...expectedRest } = expected;
    expect(rest).toEqual(expectedRest);
  });

  it("shows R2's error text exactly: operation, message, code", async () => {
    const { ledge: got, miniflare: expected } = await onBoth('messages');
    expect(got.offsetPastEnd).toEqual({ error: 'get: The requested range is not satisfiable (10039)' });
    expect(got.badPart).toEqual({
      error: 'completeMultipartUpload: One or more of the specified parts could not be found. (10025)',
    });
    expect(got.tooSmall).toEqual({
      error: 'completeMultipartUpload: Your proposed upload is smaller than the minimum allowed object size. (10011)',
    });
    expect(got).toEqual(expected);
  });

  it('lists objects with httpMetadata and customMetadata (empty unless included) and their checksums', async () => {
    const { ledge: got, miniflare: expected } = await onBoth('listing');
    expect(got.none[0]).toMatchObject({ key: 'l/meta', httpMetadata: {}, customMetadata: {} });
    expect(Object.keys(got.none[0].checksums).sort()).toEqual(['md5', 'sha256']);
    expect(got.both[0]).toMatchObject({
      httpMetadata: { contentType: 'text/plain', cacheControl: 'no-cache' },
      customMetadata: { owner: 'zoë' },
    });
    expect(got).toEqual(asOnR2(expected));
  });

  it('answers put and complete with the object as R2 does (no range; checksums of a single-part object)', async () => {
    const { ledge: got, miniflare: expected } = await onBoth('writes');
    expect(got.put.range).toBeUndefined();
    expect(got).toEqual(asOnR2(expected));
  });
});
