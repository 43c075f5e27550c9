import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { decodeAwsChunked } from '../../src/s3/chunked.ts';
import { SigningKey } from '../../src/s3/sigv4.ts';
import { NodeSha256, s3Port, signRequest } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

const EMPTY_SHA256 = createHash('sha256').digest('hex');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** aws-chunked chunks signed as AWS documents it; `breakChunk` gets a wrong signature. */
function signedChunks(
  data: Buffer,
  chunkSize: number,
  seed: { signature: string; amzDate: string; scope: string; signingKey: Buffer },
  breakChunk?: number,
): Buffer {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < data.length; offset += chunkSize)
    chunks.push(data.subarray(offset, offset + chunkSize));
  chunks.push(Buffer.alloc(0));
  const pieces: Buffer[] = [];
  let previous = seed.signature;
  chunks.forEach((chunk, index) => {
    const toSign = ['AWS4-HMAC-SHA256-PAYLOAD', seed.amzDate, seed.scope, previous, EMPTY_SHA256, sha256(chunk)];
    let signature = createHmac('sha256', seed.signingKey).update(toSign.join('\n')).digest('hex');
    if (index === breakChunk) signature = signature.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    previous = signature;
    pieces.push(Buffer.from(`${chunk.length.toString(16)};chunk-signature=${signature}\r\n`), chunk);
    if (chunk.length > 0) pieces.push(Buffer.from('\r\n'));
  });
  pieces.push(Buffer.from('\r\n'));
  return Buffer.concat(pieces);
}

function filesUnder(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

describe('aws-chunked: a chunk is handed on only once its signature holds', () => {
  it('yields none of a forged chunk, even the bytes that arrived before its signature was checked', async () => {
    const keyBytes = randomBytes(32);
    const seed = { signature: 'a'.repeat(64), amzDate: '20260101T000000Z', scope: '20260101/auto/s3/aws4_request' };
    const data = Buffer.alloc(3 * 1024, 7);
    const body = signedChunks(data, 1024, { ...seed, signingKey: keyBytes }, 1);
    const received: Buffer[] = [];
    const decoding = decodeAwsChunked(
      (async function* () {
        // Small network pieces: the forged chunk's first bytes arrive long before its end.
        for (let offset = 0; offset < body.length; offset += 100) yield body.subarray(offset, offset + 100);
      })(),
      {
        signing: {
          key: new SigningKey(keyBytes),
          seedSignature: seed.signature,
          amzDate: seed.amzDate,
          scope: seed.scope,
        },
        trailer: false,
        onTrailer: () => undefined,
      },
    );
    await expect(
      (async () => {
        for await (const piece of decoding) received.push(piece);
      })(),
    ).rejects.toThrow('The request signature we calculated does not match');
    expect(Buffer.concat(received).length).toBe(1024);
  });
});

describe('SigV4 as strict as AWS', () => {
  const fx = useS3Fixture({ buckets: ['strict'], objects: [{ Bucket: 'strict', Key: 'a b', Body: 'space' }] });

  it('refuses a signature that does not cover host (header and presigned)', async () => {
    const port = s3Port(fx.ledge);
    const signer = new SignatureV4({
      credentials: fx.credentials,
      region: 'auto',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const request = {
      method: 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port,
      path: '/strict/a%20b',
      query: {},
      // No host: the SDK signs the headers it is given, so the signature covers x-amz-* only.
      headers: { 'x-amz-content-sha256': EMPTY_SHA256 },
    };
    const signed = await signer.sign(request);
    expect(String(signed.headers['authorization'])).not.toContain('host');
    const header = await fetch(`http://127.0.0.1:${port}/strict/a%20b`, {
      headers: signed.headers as Record<string, string>,
    });
    expect(header.status).toBe(403);
    expect(await header.text()).toContain('were not signed: host');

    const presigned = await signer.presign({ ...request, headers: { 'x-ledge-test': 'signed' } }, { expiresIn: 300 });
    const query = new URLSearchParams(presigned.query as Record<string, string>).toString();
    expect(query).toContain('X-Amz-SignedHeaders=x-ledge-test&');
    const url = await fetch(`http://127.0.0.1:${port}/strict/a%20b?${query}`, {
      headers: { 'x-ledge-test': 'signed' },
    });
    expect(await url.text()).toContain('were not signed: host');
    expect(url.status).toBe(403);

    // The same request with host signed is served.
    const good = await signRequest(fx.ledge, fx.credentials, { method: 'GET', path: '/strict/a%20b' });
    expect(await (await fetch(good.url, { headers: good.headers })).text()).toBe('space');
  });

  it('reads the query as it was signed: a signed %2B cannot be sent as + (a space to the operation)', async () => {
    const signed = await signRequest(fx.ledge, fx.credentials, {
      method: 'GET',
      path: '/strict?list-type=2&prefix=a%2B',
    });
    const asSigned = await fetch(signed.url, { headers: signed.headers });
    expect(asSigned.status).toBe(200);
    expect(await asSigned.text()).not.toContain('<Key>a b</Key>');
    // Same bytes on the wire but `+`: the operation would list prefix "a " and find "a b".
    const tampered = await fetch(signed.url.replace('%2B', '+'), { headers: signed.headers });
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    // A client that signs a space and sends it as + is served (URLSearchParams reads both alike).
    const space = await signRequest(fx.ledge, fx.credentials, {
      method: 'GET',
      path: '/strict?list-type=2&prefix=a%20',
    });
    const plus = await fetch(space.url.replace('%20', '+'), { headers: space.headers });
    expect(plus.status).toBe(200);
    expect(await plus.text()).toContain('<Key>a b</Key>');
  });

  it('stores nothing of an aws-chunked body with a forged chunk: no object, no file left', async () => {
    const data = Buffer.alloc(200_000, 5);
    const blobs = join(fx.ledge.dataDir, 'blobs');
    const before = filesUnder(blobs);
    const signed = await signRequest(fx.ledge, fx.credentials, {
      method: 'PUT',
      path: '/strict/forged',
      payloadHash: 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
      headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': String(data.length) },
    });
    const body = signedChunks(data, 64 * 1024, signed, 1);
    const response = await fetch(signed.url, { method: 'PUT', headers: signed.headers, body });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    const head = await signRequest(fx.ledge, fx.credentials, { method: 'HEAD', path: '/strict/forged' });
    expect((await fetch(head.url, { method: 'HEAD', headers: head.headers })).status).toBe(404);
    expect(filesUnder(blobs)).toEqual(before);
  });
});
