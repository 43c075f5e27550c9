import { createHash, createHmac } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { bodyBytes, md5Hex, signedFetch, signRequest } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

const EMPTY_SHA256 = createHash('sha256').digest('hex');
const crc32Base64 = (data: Uint8Array) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc32(data));
  return bytes.toString('base64');
};

/** Signs aws-chunked chunks as AWS documents it (each signature chained from the previous one). */
function signedChunks(
  data: Buffer,
  chunkSize: number,
  seed: { signature: string; amzDate: string; scope: string; signingKey: Buffer },
  options: { breakChunk?: number; trailer?: Record<string, string> } = {},
): Buffer {
  const pieces: Buffer[] = [];
  let previous = seed.signature;
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += chunkSize)
    chunks.push(data.subarray(offset, offset + chunkSize));
  chunks.push(Buffer.alloc(0));
  chunks.forEach((chunk, index) => {
    const stringToSign = [
      'AWS4-HMAC-SHA256-PAYLOAD',
      seed.amzDate,
      seed.scope,
      previous,
      EMPTY_SHA256,
      createHash('sha256').update(chunk).digest('hex'),
    ].join('\n');
    let signature = createHmac('sha256', seed.signingKey).update(stringToSign).digest('hex');
    if (index === options.breakChunk) signature = signature.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    previous = signature;
    pieces.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${signature}\r\n`), chunk);
    if (chunk.length > 0) pieces.push(Buffer.from('\r\n'));
  });
  if (!options.trailer) {
    pieces.push(Buffer.from('\r\n'));
    return Buffer.concat(pieces);
  }
  const text = Object.entries(options.trailer)
    .map(([name, value]) => `${name}:${value}\n`)
    .join('');
  const trailerToSign = [
    'AWS4-HMAC-SHA256-TRAILER',
    seed.amzDate,
    seed.scope,
    previous,
    createHash('sha256').update(text).digest('hex'),
  ].join('\n');
  const trailerSignature = createHmac('sha256', seed.signingKey).update(trailerToSign).digest('hex');
  pieces.push(
    Buffer.from(text.replace(/\n/g, '\r\n')),
    Buffer.from(`x-amz-trailer-signature:${trailerSignature}\r\n\r\n`),
  );
  return Buffer.concat(pieces);
}

describe('S3 API request bodies: aws-chunked, trailers, checksums', () => {
  const fx = useS3Fixture({ buckets: ['bodies'] });

  const stored = async (key: string) => {
    try {
      return await bodyBytes((await fx.s3.send(new GetObjectCommand({ Bucket: 'bodies', Key: key }))).Body);
    } catch {
      return undefined;
    }
  };

  it('takes the SDK default for streams: STREAMING-UNSIGNED-PAYLOAD-TRAILER with a CRC32 trailer', async () => {
    const data = Buffer.alloc(300_000, 3);
    const put = await fx.s3.send(
      new PutObjectCommand({
        Bucket: 'bodies',
        Key: 'streamed',
        Body: Readable.from([data.subarray(0, 1000), data.subarray(1000)]),
        ContentLength: data.length,
      }),
    );
    expect(put.ETag).toBe(`"${md5Hex(data)}"`);
    expect(put.ChecksumCRC32).toBe(crc32Base64(data));
    expect((await stored('streamed'))?.equals(data)).toBe(true);
  });

  it('verifies every checksum algorithm R2 lists, as the SDK computes them', async () => {
    for (const algorithm of ['CRC32', 'CRC32C', 'CRC64NVME', 'SHA1', 'SHA256'] as const) {
      const body = Buffer.from(`checksummed with ${algorithm} `.repeat(1000));
      await fx.s3.send(
        new PutObjectCommand({ Bucket: 'bodies', Key: `sum-${algorithm}`, Body: body, ChecksumAlgorithm: algorithm }),
      );
      expect((await stored(`sum-${algorithm}`))?.equals(body)).toBe(true);
      await fx.s3.send(
        new PutObjectCommand({
          Bucket: 'bodies',
          Key: `sum-stream-${algorithm}`,
          Body: Readable.from([body]),
          ContentLength: body.length,
          ChecksumAlgorithm: algorithm,
        }),
      );
      expect((await stored(`sum-stream-${algorithm}`))?.equals(body)).toBe(true);
    }
    const sha = await fx.s3.send(
      new GetObjectCommand({ Bucket: 'bodies', Key: 'sum-SHA256', ChecksumMode: 'ENABLED' }),
    );
    expect(sha.ChecksumSHA256).toBe(
      createHash('sha256')
        .update(Buffer.from('checksummed with SHA256 '.repeat(1000)))
        .digest('base64'),
    );
  });

  it('refuses a wrong trailing checksum, a wrong x-amz-checksum header, a wrong Content-MD5 and a wrong payload hash', async () => {
    const data = Buffer.from('trailing data');
    const chunked = Buffer.concat([
      Buffer.from(`${data.length.toString(16)}\r\n`),
      data,
      Buffer.from(`\r\n0\r\nx-amz-checksum-crc32:${crc32Base64(Buffer.from('other'))}\r\n\r\n`),
    ]);
    const trailer = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/bodies/bad-trailer',
      payloadHash: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      headers: {
        'content-encoding': 'aws-chunked',
        'x-amz-decoded-content-length': String(data.length),
        'x-amz-trailer': 'x-amz-checksum-crc32',
      },
      body: chunked,
    });
    expect(trailer.response.status).toBe(400);
    expect(await trailer.response.text()).toContain('<Code>BadDigest</Code>');
    expect(await stored('bad-trailer')).toBeUndefined();

    const header = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/bodies/bad-header',
      headers: { 'x-amz-checksum-crc32': crc32Base64(Buffer.from('other')) },
      body: 'payload',
    });
    expect(header.response.status).toBe(400);
    expect(await stored('bad-header')).toBeUndefined();

    const md5 = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/bodies/bad-md5',
      headers: { 'content-md5': createHash('md5').update('other').digest('base64') },
      body: 'payload',
    });
    expect(md5.response.status).toBe(400);
    expect(await md5.response.text()).toContain('<Code>BadDigest</Code>');
    expect(await stored('bad-md5')).toBeUndefined();

    const payload = await signedFetch(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/bodies/bad-payload',
      payloadHash: createHash('sha256').update('other').digest('hex'),
      body: 'payload',
    });
    expect(payload.response.status).toBe(400);
    expect(await payload.response.text()).toContain('<Code>XAmzContentSHA256Mismatch</Code>');
    expect(await stored('bad-payload')).toBeUndefined();
  });

  it('checks per-chunk signatures of STREAMING-AWS4-HMAC-SHA256-PAYLOAD, storing nothing when one is wrong', async () => {
    const data = Buffer.alloc(200_000);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const good = await signedChunkedPutFixed('chunked-good', data);
    expect(good.status).toBe(200);
    expect((await stored('chunked-good'))?.equals(data)).toBe(true);
    const bad = await signedChunkedPutFixed('chunked-bad', data, { breakChunk: 2 });
    expect(bad.status).toBe(403);
    expect(await bad.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(await stored('chunked-bad')).toBeUndefined();
    const trailed = await signedChunkedPutFixed('chunked-trailer', data, { trailer: true });
    expect(trailed.status).toBe(200);
    expect((await stored('chunked-trailer'))?.equals(data)).toBe(true);
  });

  /**
   * The seed signature must sign the PUT itself, whose body is only built from it: sign the PUT's headers
   * (the body is not part of a streaming signature), then send that exact request with the chunked body.
   */
  async function signedChunkedPutFixed(
    key: string,
    data: Buffer,
    options: { breakChunk?: number; trailer?: boolean } = {},
  ) {
    const payloadHash = options.trailer
      ? 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER'
      : 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
    const signed = await signRequest(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: `/bodies/${key}`,
      payloadHash,
      headers: {
        'content-encoding': 'aws-chunked',
        'x-amz-decoded-content-length': String(data.length),
        ...(options.trailer ? { 'x-amz-trailer': 'x-amz-checksum-crc32' } : {}),
      },
    });
    const body = signedChunks(data, 64 * 1024, signed, {
      breakChunk: options.breakChunk,
      trailer: options.trailer ? { 'x-amz-checksum-crc32': crc32Base64(data) } : undefined,
    });
    return fetch(signed.url, { method: 'PUT', headers: signed.headers, body });
  }
});
