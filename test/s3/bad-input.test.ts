import { describe, expect, it } from 'vitest';
import { signedFetch } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

/** A client's mistakes get S3's 4xx errors with a code, never a 500 and never a half-written object. */
describe('S3 API bad input', () => {
  const fx = useS3Fixture({ buckets: ['bad'], objects: [{ Bucket: 'bad', Key: 'k', Body: 'v' }] });

  const cases: [
    string,
    { method: string; path: string; body?: string; headers?: Record<string, string> },
    number,
    string,
  ][] = [
    [
      'malformed Delete XML',
      { method: 'POST', path: '/bad?delete', body: '<Delete><Object><Key>a</Key></Delete>' },
      400,
      'MalformedXML',
    ],
    ['Delete without objects', { method: 'POST', path: '/bad?delete', body: '<Delete></Delete>' }, 400, 'MalformedXML'],
    [
      'a DTD',
      { method: 'POST', path: '/bad?delete', body: '<!DOCTYPE x [<!ENTITY a "b">]><Delete/>' },
      400,
      'MalformedXML',
    ],
    [
      'an unknown entity',
      { method: 'POST', path: '/bad?delete', body: '<Delete><Object><Key>&nope;</Key></Object></Delete>' },
      400,
      'MalformedXML',
    ],
    ['max-keys not a number', { method: 'GET', path: '/bad?list-type=2&max-keys=lots' }, 400, 'InvalidArgument'],
    [
      'an unknown encoding-type',
      { method: 'GET', path: '/bad?list-type=2&encoding-type=base64' },
      400,
      'InvalidArgument',
    ],
    ['partNumber 0', { method: 'GET', path: '/bad/k?partNumber=0' }, 400, 'InvalidArgument'],
    [
      'partNumber and Range',
      { method: 'GET', path: '/bad/k?partNumber=1', headers: { range: 'bytes=0-1' } },
      400,
      'InvalidRequest',
    ],
    [
      'a copy source without a key',
      { method: 'PUT', path: '/bad/c', headers: { 'x-amz-copy-source': 'bad' } },
      400,
      'InvalidArgument',
    ],
    [
      'an unknown metadata directive',
      { method: 'PUT', path: '/bad/c', headers: { 'x-amz-copy-source': 'bad/k', 'x-amz-metadata-directive': 'MOVE' } },
      400,
      'InvalidArgument',
    ],
    [
      'a bad copy-source range',
      {
        method: 'PUT',
        path: '/bad/c?partNumber=1&uploadId=x',
        headers: { 'x-amz-copy-source': 'bad/k', 'x-amz-copy-source-range': 'bytes=9-1' },
      },
      400,
      'InvalidArgument',
    ],
    ['an invalid path encoding', { method: 'GET', path: '/bad/%E0%A4%A' }, 400, 'InvalidArgument'],
    ['a key over 1024 bytes', { method: 'PUT', path: `/bad/${'k'.repeat(1100)}`, body: 'x' }, 400, 'InvalidObjectName'],
    [
      'a Content-MD5 that is not one',
      { method: 'PUT', path: '/bad/md5', body: 'x', headers: { 'content-md5': 'abc' } },
      400,
      'InvalidDigest',
    ],
    [
      'an unknown trailer',
      { method: 'PUT', path: '/bad/t', body: 'x', headers: { 'x-amz-trailer': 'x-amz-checksum-md4' } },
      400,
      'InvalidRequest',
    ],
    [
      'a malformed chunk',
      {
        method: 'PUT',
        path: '/bad/ch',
        body: 'zz\r\nabc\r\n',
        headers: { 'content-encoding': 'aws-chunked', 'x-amz-decoded-content-length': '3' },
      },
      400,
      'InvalidChunkEncoding',
    ],
    [
      'an unknown location',
      {
        method: 'PUT',
        path: '/newbucket',
        body: '<CreateBucketConfiguration><LocationConstraint>mars</LocationConstraint></CreateBucketConfiguration>',
      },
      400,
      'InvalidLocationConstraint',
    ],
    [
      'a lifecycle rule without status',
      {
        method: 'PUT',
        path: '/bad?lifecycle',
        body: '<LifecycleConfiguration><Rule><ID>x</ID></Rule></LifecycleConfiguration>',
      },
      400,
      'MalformedXML',
    ],
    [
      'a CORS rule without methods',
      {
        method: 'PUT',
        path: '/bad?cors',
        body: '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule></CORSConfiguration>',
      },
      400,
      'MalformedXML',
    ],
    ['a PATCH', { method: 'PATCH', path: '/bad/k' }, 405, 'MethodNotAllowed'],
    ['a versionId', { method: 'GET', path: '/bad/k?versionId=3' }, 501, 'NotImplemented'],
  ];

  it.each(cases)('%s', async (_name, request, status, code) => {
    const payloadHash =
      request.headers?.['content-encoding'] === 'aws-chunked'
        ? 'STREAMING-UNSIGNED-PAYLOAD-TRAILER'
        : request.headers?.['x-amz-trailer']
          ? 'STREAMING-UNSIGNED-PAYLOAD-TRAILER'
          : undefined;
    const { response } = await signedFetch(fx.ledge, fx.credentials, {
      ...request,
      ...(payloadHash ? { payloadHash } : {}),
    });
    const text = await response.text();
    expect({ status: response.status, code: /<Code>([^<]*)<\/Code>/.exec(text)?.[1] }).toEqual({ status, code });
  });

  it('stored nothing for the refused writes', async () => {
    const list = await fetch(`${fx.ledge.apiUrl}/accounts/${fx.ledge.accountId}/r2/buckets/bad/objects`, {
      headers: fx.ledge.tokenHeaders,
    });
    const keys = ((await list.json()) as { result: { key: string }[] }).result.map((o) => o.key);
    expect(keys).toEqual(['k']);
  });
});
