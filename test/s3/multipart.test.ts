import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketLifecycleCommand,
  GetBucketLifecycleConfigurationCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  UploadPartCommand,
  UploadPartCopyCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { bodyBytes, s3Client, s3CredentialsOf, failure } from './helpers.ts';

const MiB = 1024 * 1024;

function pattern(size: number, seed: number): Buffer {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4096) data.writeUInt32LE((i * 2654435761 + seed) >>> 0, i);
  return data;
}

const multipartEtag = (parts: Buffer[]) =>
  `"${createHash('md5')
    .update(Buffer.concat(parts.map((p) => createHash('md5').update(p).digest())))
    .digest('hex')}-${parts.length}"`;

describe('S3 API multipart uploads and bucket configuration', () => {
  let ledge: TestLedge;
  let s3: S3Client;

  beforeAll(async () => {
    ledge = await startLedge();
    s3 = s3Client(ledge, await s3CredentialsOf(ledge));
    await s3.send(new CreateBucketCommand({ Bucket: 'multi' }));
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  it('uploads, lists and completes parts; the etag is md5-of-md5s-N; partNumber reads a part', async () => {
    const parts = [pattern(5 * MiB, 1), pattern(5 * MiB, 2), pattern(1234, 3)];
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({
        Bucket: 'multi',
        Key: 'big.bin',
        ContentType: 'application/x-big',
        Metadata: { m: 'v' },
      }),
    );
    const etags: string[] = [];
    for (const [index, body] of parts.entries()) {
      const part = await s3.send(
        new UploadPartCommand({ Bucket: 'multi', Key: 'big.bin', UploadId, PartNumber: index + 1, Body: body }),
      );
      etags.push(part.ETag!);
    }
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'multi', Key: 'big.bin', UploadId, MaxParts: 2 }));
    expect(listed.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([
      [1, 5 * MiB],
      [2, 5 * MiB],
    ]);
    expect(listed.IsTruncated).toBe(true);
    const rest = await s3.send(
      new ListPartsCommand({
        Bucket: 'multi',
        Key: 'big.bin',
        UploadId,
        PartNumberMarker: listed.NextPartNumberMarker,
      }),
    );
    expect(rest.Parts?.map((p) => p.PartNumber)).toEqual([3]);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'multi' }));
    expect(uploads.Uploads?.map((u) => [u.Key, u.UploadId])).toEqual([['big.bin', UploadId]]);

    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'multi',
        Key: 'big.bin',
        UploadId,
        MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
      }),
    );
    expect(done.ETag).toBe(multipartEtag(parts));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'big.bin' }));
    expect(got.ETag).toBe(done.ETag);
    expect(got.ContentType).toBe('application/x-big');
    expect(got.Metadata).toEqual({ m: 'v' });
    expect((await bodyBytes(got.Body)).equals(Buffer.concat(parts))).toBe(true);

    const second = await s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'big.bin', PartNumber: 2 }));
    expect(second.PartsCount).toBe(3);
    expect(second.ContentRange).toBe(`bytes ${5 * MiB}-${10 * MiB - 1}/${10 * MiB + 1234}`);
    expect((await bodyBytes(second.Body)).equals(parts[1]!)).toBe(true);
    const headPart = await s3.send(new HeadObjectCommand({ Bucket: 'multi', Key: 'big.bin', PartNumber: 3 }));
    expect(headPart.ContentLength).toBe(1234);
    const none = await failure(s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'big.bin', PartNumber: 4 })));
    expect(none.$metadata.httpStatusCode).toBe(416);
    expect((await s3.send(new ListMultipartUploadsCommand({ Bucket: 'multi' }))).Uploads ?? []).toEqual([]);
  });

  it("enforces R2's equal-part-size rule and refuses wrong etags, storing nothing", async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'multi', Key: 'uneven' }));
    const sizes = [5 * MiB, 6 * MiB, 100];
    const etags: string[] = [];
    for (const [index, size] of sizes.entries()) {
      const part = await s3.send(
        new UploadPartCommand({
          Bucket: 'multi',
          Key: 'uneven',
          UploadId,
          PartNumber: index + 1,
          Body: pattern(size, index),
        }),
      );
      etags.push(part.ETag!);
    }
    const uneven = await failure(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'multi',
          Key: 'uneven',
          UploadId,
          MultipartUpload: { Parts: etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 })) },
        }),
      ),
    );
    expect(uneven.name).toBe('BadUpload');
    const wrongEtag = await failure(
      s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: 'multi',
          Key: 'uneven',
          UploadId,
          MultipartUpload: { Parts: [{ ETag: '"00000000000000000000000000000000"', PartNumber: 1 }] },
        }),
      ),
    );
    expect(wrongEtag.name).toBe('InvalidPart');
    expect(
      (await failure(s3.send(new HeadObjectCommand({ Bucket: 'multi', Key: 'uneven' })))).$metadata.httpStatusCode,
    ).toBe(404);
    await s3.send(new AbortMultipartUploadCommand({ Bucket: 'multi', Key: 'uneven', UploadId }));
    const gone = await failure(s3.send(new ListPartsCommand({ Bucket: 'multi', Key: 'uneven', UploadId })));
    expect(gone.name).toBe('NoSuchUpload');
    const unknown = await failure(
      s3.send(
        new UploadPartCommand({ Bucket: 'multi', Key: 'uneven', UploadId: 'f'.repeat(32), PartNumber: 1, Body: 'x' }),
      ),
    );
    expect(unknown.name).toBe('NoSuchUpload');
  });

  it('copies parts from an existing object (UploadPartCopy with ranges)', async () => {
    const source = pattern(11 * MiB, 9);
    await s3.send(new PutObjectCommand({ Bucket: 'multi', Key: 'copy-source', Body: source }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'multi', Key: 'copied' }));
    const ranges = [
      [0, 5 * MiB - 1],
      [5 * MiB, 10 * MiB - 1],
      [10 * MiB, 11 * MiB - 1],
    ];
    const parts = [];
    for (const [index, [first, last]] of ranges.entries()) {
      const copied = await s3.send(
        new UploadPartCopyCommand({
          Bucket: 'multi',
          Key: 'copied',
          UploadId,
          PartNumber: index + 1,
          CopySource: 'multi/copy-source',
          CopySourceRange: `bytes=${first}-${last}`,
        }),
      );
      parts.push({ ETag: copied.CopyPartResult!.ETag!, PartNumber: index + 1 });
    }
    const done = await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'multi',
        Key: 'copied',
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    expect(done.ETag).toBe(multipartEtag(ranges.map(([first, last]) => source.subarray(first, last! + 1))));
    const got = await s3.send(new GetObjectCommand({ Bucket: 'multi', Key: 'copied' }));
    expect((await bodyBytes(got.Body)).equals(source)).toBe(true);
  });

  it('maps lifecycle configuration onto the bucket lifecycle rules /client/v4 shows', async () => {
    const missing = await failure(s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'multi' })));
    expect(missing.name).toBe('NoSuchLifecycleConfiguration');
    await s3.send(
      new PutBucketLifecycleConfigurationCommand({
        Bucket: 'multi',
        LifecycleConfiguration: {
          Rules: [
            { ID: 'expire-logs', Status: 'Enabled', Filter: { Prefix: 'logs/' }, Expiration: { Days: 30 } },
            {
              ID: 'cool-down',
              Status: 'Disabled',
              Filter: { Prefix: '' },
              Transitions: [{ Days: 10, StorageClass: 'STANDARD_IA' }],
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 },
            },
          ],
        },
      }),
    );
    const v4 = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets/multi/lifecycle`, {
      headers: ledge.tokenHeaders,
    });
    const rules = ((await v4.json()) as { result: { rules: unknown[] } }).result.rules;
    expect(rules).toEqual([
      {
        id: 'expire-logs',
        enabled: true,
        conditions: { prefix: 'logs/' },
        deleteObjectsTransition: { condition: { type: 'Age', maxAge: 30 * 86400 } },
      },
      {
        id: 'cool-down',
        enabled: false,
        conditions: { prefix: '' },
        storageClassTransitions: [{ condition: { type: 'Age', maxAge: 10 * 86400 }, storageClass: 'InfrequentAccess' }],
        abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 2 * 86400 } },
      },
    ]);
    const back = await s3.send(new GetBucketLifecycleConfigurationCommand({ Bucket: 'multi' }));
    expect(back.Rules?.map((r) => [r.ID, r.Status, r.Filter?.Prefix, r.Expiration?.Days])).toEqual([
      ['expire-logs', 'Enabled', 'logs/', 30],
      ['cool-down', 'Disabled', '', undefined],
    ]);
    expect(back.Rules?.[1]?.Transitions?.[0]).toEqual({ Days: 10, StorageClass: 'STANDARD_IA' });
    const notOffered = await failure(s3.send(new DeleteBucketLifecycleCommand({ Bucket: 'multi' })));
    expect(notOffered.$metadata.httpStatusCode).toBe(501);
    const location = await s3.send(new GetBucketLocationCommand({ Bucket: 'multi' }));
    expect(location.LocationConstraint).toBe('auto');
  });
});
