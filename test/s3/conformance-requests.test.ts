import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bodyBytes, bodyText, failure, s3Port, signedFetch, signRequest } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

const MiB = 1024 * 1024;
/** 1024 x 'A' and its digests as S3 computes them (the vectors of ceph/s3-tests' checksum tests). */
const A1024 = 'A'.repeat(1024);
const A1024_SHA256 = 'arcu6553sHVAiX4MjW0j7I7vD4w6R+Gz9Ok0Q9lTa+0=';
const A1024_CRC64NVME = 'Qeh8oXvGiSo=';

/** An S3 error document's elements, by name. */
async function errorDocument(response: Response): Promise<{ status: number; fields: Record<string, string> }> {
  const text = await response.text();
  const fields: Record<string, string> = {};
  for (const [, name, value] of text.matchAll(/<([A-Za-z-]+)>([^<]*)<\/\1>/g)) fields[name!] = value!;
  return { status: response.status, fields };
}

describe('S3 conformance: presigned expiry, partNumber, Expect, checksums, repeated completion', () => {
  const fx = useS3Fixture({ buckets: ['conf'], objects: [{ Bucket: 'conf', Key: 'single', Body: 'body' }] });

  const exists = async (key: string) =>
    fx.s3.send(new HeadObjectCommand({ Bucket: 'conf', Key: key })).then(
      () => true,
      () => false,
    );

  it('answers an expired presigned URL as S3: 403 AccessDenied with X-Amz-Expires, Expires and ServerTime', async () => {
    const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 120_000);
    const url = await getSignedUrl(fx.s3, new PutObjectCommand({ Bucket: 'conf', Key: 'late' }), {
      expiresIn: 60,
      signingDate: signedAt,
    });
    const expired = await errorDocument(await fetch(url, { method: 'PUT', body: 'late' }));
    expect(expired.status).toBe(403);
    expect(expired.fields).toMatchObject({
      Code: 'AccessDenied',
      Message: 'Request has expired',
      'X-Amz-Expires': '60',
      Expires: new Date(signedAt.getTime() + 60_000).toISOString().replace('.000Z', 'Z'),
    });
    expect(expired.fields.ServerTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Date.parse(expired.fields.ServerTime!)).toBeGreaterThan(Date.parse(expired.fields.Expires!));
    expect(await exists('late')).toBe(false);

    // X-Amz-Expires is read before the signature: 0 has expired already, the malformed ones are 400s.
    const fresh = await getSignedUrl(fx.s3, new GetObjectCommand({ Bucket: 'conf', Key: 'single' }), { expiresIn: 60 });
    const withExpires = (value: string) => fresh.replace(/X-Amz-Expires=\d+/, `X-Amz-Expires=${value}`);
    const zero = await errorDocument(await fetch(withExpires('0')));
    expect([zero.status, zero.fields.Code, zero.fields.Message, zero.fields['X-Amz-Expires']]).toEqual([
      403,
      'AccessDenied',
      'Request has expired',
      '0',
    ]);
    for (const [value, message] of [
      ['-7', 'X-Amz-Expires must be non-negative'],
      ['soon', 'X-Amz-Expires should be a number'],
      [
        '604801',
        'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds',
      ],
    ]) {
      const refused = await errorDocument(await fetch(withExpires(value!)));
      expect([refused.status, refused.fields.Code, refused.fields.Message]).toEqual([
        400,
        'AuthorizationQueryParametersError',
        message,
      ]);
    }
  });

  it('partNumber=1 of a single-part object is the whole object as a 206 range, without a parts count', async () => {
    const got = await fx.s3.send(new GetObjectCommand({ Bucket: 'conf', Key: 'single', PartNumber: 1 }));
    expect(got.$metadata.httpStatusCode).toBe(206);
    expect(got.ContentRange).toBe('bytes 0-3/4');
    expect(got.PartsCount).toBeUndefined();
    expect(await bodyText(got.Body)).toBe('body');
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'conf', Key: 'single', PartNumber: 1 }));
    expect([head.$metadata.httpStatusCode, head.ContentLength, head.PartsCount]).toEqual([206, 4, undefined]);
    const beyond = await failure(fx.s3.send(new GetObjectCommand({ Bucket: 'conf', Key: 'single', PartNumber: 2 })));
    expect([beyond.$metadata.httpStatusCode, beyond.name]).toEqual([416, 'InvalidPartNumber']);
  });

  it('ignores an Expect other than 100-continue, as S3 does (Node alone would answer 417)', async () => {
    for (const [key, expectation] of [
      ['expect-200', '200'],
      ['expect-empty', ''],
    ] as const) {
      const signed = await signRequest(fx.ledge, fx.credentials, { method: 'PUT', path: `/conf/${key}`, body: 'bar' });
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: s3Port(fx.ledge),
            method: 'PUT',
            path: `/conf/${key}`,
            headers: { ...signed.headers, expect: expectation, 'content-length': '3' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('bar');
      });
      expect(status).toBe(200);
      expect(await bodyText((await fx.s3.send(new GetObjectCommand({ Bucket: 'conf', Key: key }))).Body)).toBe('bar');
    }
  });

  it('checks x-amz-checksum-sha256 and -crc64nvme: a mismatch is BadDigest, a malformed value InvalidRequest', async () => {
    const sha = await fx.s3.send(
      new PutObjectCommand({ Bucket: 'conf', Key: 'sha', Body: A1024, ChecksumSHA256: A1024_SHA256 }),
    );
    expect(sha.ChecksumSHA256).toBe(A1024_SHA256);
    const crc = await fx.s3.send(
      new PutObjectCommand({ Bucket: 'conf', Key: 'crc', Body: A1024, ChecksumCRC64NVME: A1024_CRC64NVME }),
    );
    expect(crc.ChecksumCRC64NVME).toBe(A1024_CRC64NVME);

    const otherSha = createHash('sha256').update('B').digest('base64');
    const wrongSha = await failure(
      fx.s3.send(new PutObjectCommand({ Bucket: 'conf', Key: 'sha-bad', Body: A1024, ChecksumSHA256: otherSha })),
    );
    expect([wrongSha.$metadata.httpStatusCode, wrongSha.name, wrongSha.message]).toEqual([
      400,
      'BadDigest',
      'The SHA256 you specified did not match the calculated checksum.',
    ]);
    const wrongCrc = await failure(
      fx.s3.send(
        new PutObjectCommand({ Bucket: 'conf', Key: 'crc-bad', Body: A1024, ChecksumCRC64NVME: 'AAAAAAAAAAA=' }),
      ),
    );
    expect([wrongCrc.name, wrongCrc.message]).toEqual([
      'BadDigest',
      'The CRC64NVME you specified did not match the calculated checksum.',
    ]);
    const malformed = await failure(
      fx.s3.send(new PutObjectCommand({ Bucket: 'conf', Key: 'sha-bad', Body: A1024, ChecksumSHA256: 'bad' })),
    );
    expect([malformed.$metadata.httpStatusCode, malformed.name, malformed.message]).toEqual([
      400,
      'InvalidRequest',
      'Value for x-amz-checksum-sha256 header is invalid.',
    ]);
    const two = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/conf/two-sums',
      body: A1024,
      headers: { 'x-amz-checksum-sha256': A1024_SHA256, 'x-amz-checksum-crc64nvme': A1024_CRC64NVME },
    });
    const twoError = await errorDocument(two.response);
    expect([twoError.status, twoError.fields.Code, twoError.fields.Message]).toEqual([
      400,
      'InvalidRequest',
      'Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.',
    ]);
    const md5 = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/conf/md5-bad',
      body: A1024,
      headers: { 'content-md5': createHash('md5').update('B').digest('base64') },
    });
    expect((await errorDocument(md5.response)).fields.Message).toBe(
      'The Content-MD5 you specified did not match what we received.',
    );
    for (const key of ['sha-bad', 'crc-bad', 'two-sums', 'md5-bad']) expect(await exists(key)).toBe(false);
  });

  it('answers a CompleteMultipartUpload repeated on a completed upload with the same result, as S3', async () => {
    const parts = [Buffer.alloc(5 * MiB, 1), Buffer.from('tail')];
    const { UploadId } = await fx.s3.send(new CreateMultipartUploadCommand({ Bucket: 'conf', Key: 'mp' }));
    const listed: { ETag: string; PartNumber: number }[] = [];
    for (const [index, body] of parts.entries()) {
      const part = await fx.s3.send(
        new UploadPartCommand({ Bucket: 'conf', Key: 'mp', UploadId, PartNumber: index + 1, Body: body }),
      );
      listed.push({ ETag: part.ETag!, PartNumber: index + 1 });
    }
    const complete = (Parts: typeof listed) =>
      fx.s3.send(
        new CompleteMultipartUploadCommand({ Bucket: 'conf', Key: 'mp', UploadId, MultipartUpload: { Parts } }),
      );
    const first = await complete(listed);
    const again = await complete(listed);
    expect([again.$metadata.httpStatusCode, again.ETag, again.Key, again.Location]).toEqual([
      200,
      first.ETag,
      'mp',
      first.Location,
    ]);
    // Another list of parts is not the completion that happened.
    expect((await failure(complete(listed.slice(0, 1)))).name).toBe('NoSuchUpload');

    // partNumber on the multipart object: its part, 206, with the parts count.
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'conf', Key: 'mp', PartNumber: 2 }));
    expect([head.$metadata.httpStatusCode, head.ContentLength, head.PartsCount, head.ETag]).toEqual([
      206,
      4,
      2,
      first.ETag,
    ]);
    const part1 = await fx.s3.send(new GetObjectCommand({ Bucket: 'conf', Key: 'mp', PartNumber: 1 }));
    expect(part1.ContentRange).toBe(`bytes 0-${5 * MiB - 1}/${5 * MiB + 4}`);
    expect((await bodyBytes(part1.Body)).equals(parts[0]!)).toBe(true);
    const none = await failure(fx.s3.send(new GetObjectCommand({ Bucket: 'conf', Key: 'mp', PartNumber: 3 })));
    expect([none.$metadata.httpStatusCode, none.name]).toEqual([416, 'InvalidPartNumber']);

    // Once the key holds another object, the upload's result is gone: NoSuchUpload.
    await fx.s3.send(new PutObjectCommand({ Bucket: 'conf', Key: 'mp', Body: 'replaced' }));
    expect((await failure(complete(listed))).name).toBe('NoSuchUpload');
  });
});
