import {
  CopyObjectCommand,
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { bodyBytes, bodyText, md5Hex, failure } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

describe('S3 API with the AWS SDK: buckets and objects', () => {
  const fx = useS3Fixture({ buckets: ['sdk'] });

  it('creates, lists and heads buckets; a second create is BucketAlreadyOwnedByYou', async () => {
    await fx.s3.send(new HeadBucketCommand({ Bucket: 'sdk' }));
    const listed = await fx.s3.send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((b) => b.Name)).toContain('sdk');
    expect(listed.Owner?.ID).toBe(fx.ledge.accountId);
    const again = await failure(fx.s3.send(new CreateBucketCommand({ Bucket: 'sdk' })));
    expect(again.name).toBe('BucketAlreadyOwnedByYou');
    const missing = await failure(fx.s3.send(new HeadBucketCommand({ Bucket: 'nope-nope' })));
    expect(missing.$metadata.httpStatusCode).toBe(404);
    const bad = await failure(fx.s3.send(new CreateBucketCommand({ Bucket: 'Bad_Name' })));
    expect(bad.name).toBe('InvalidBucketName');
  });

  it('puts and gets an object with HTTP and custom metadata (Unicode metadata RFC 2047-encoded)', async () => {
    const put = await fx.s3.send(
      new PutObjectCommand({
        Bucket: 'sdk',
        Key: 'dir/hello world.txt',
        Body: 'hello, s3',
        ContentType: 'text/plain',
        CacheControl: 'max-age=60',
        ContentDisposition: 'inline',
        Metadata: { color: 'blue', name: '=?UTF-8?B?w6ljbGFpcg==?=' },
      }),
    );
    expect(put.ETag).toBe(`"${md5Hex('hello, s3')}"`);
    const got = await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'dir/hello world.txt' }));
    expect(await bodyText(got.Body)).toBe('hello, s3');
    expect(got.ETag).toBe(put.ETag);
    expect(got.ContentType).toBe('text/plain');
    expect(got.CacheControl).toBe('max-age=60');
    expect(got.ContentDisposition).toBe('inline');
    expect(got.Metadata).toEqual({ color: 'blue', name: '=?UTF-8?B?w6ljbGFpcg==?=' });
    expect(got.ContentLength).toBe(9);
  });

  it('serves ranges (206, Content-Range) and refuses an unsatisfiable one (416)', async () => {
    const data = Buffer.alloc(200_000, 7);
    data.write('start', 0);
    data.write('end', data.length - 3);
    await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'big', Body: data }));
    const head = await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'big', Range: 'bytes=0-4' }));
    expect(head.$metadata.httpStatusCode).toBe(206);
    expect(head.ContentRange).toBe(`bytes 0-4/${data.length}`);
    expect(await bodyText(head.Body)).toBe('start');
    const tail = await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'big', Range: 'bytes=-3' }));
    expect(await bodyText(tail.Body)).toBe('end');
    const whole = await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'big' }));
    expect((await bodyBytes(whole.Body)).equals(data)).toBe(true);
    const outside = await failure(
      fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'big', Range: 'bytes=999999-' })),
    );
    expect(outside.name).toBe('InvalidRange');
    expect(outside.$metadata.httpStatusCode).toBe(416);
  });

  it('answers conditional reads with 304 / 412 and conditional PUT with 412, writing nothing', async () => {
    const put = await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'cond', Body: 'v1' }));
    const notModified = await failure(
      fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'cond', IfNoneMatch: put.ETag })),
    );
    expect(notModified.$metadata.httpStatusCode).toBe(304);
    const failed = await failure(fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'cond', IfMatch: '"0000"' })));
    expect(failed.$metadata.httpStatusCode).toBe(412);
    const headFailed = await failure(
      fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'cond', IfMatch: '"0000"' })),
    );
    expect(headFailed.$metadata.httpStatusCode).toBe(412);
    const ok = await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'cond', IfMatch: put.ETag }));
    expect(await bodyText(ok.Body)).toBe('v1');

    const refused = await failure(
      fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'cond', Body: 'v2', IfNoneMatch: '*' })),
    );
    expect(refused.name).toBe('PreconditionFailed');
    const stale = await failure(
      fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'cond', Body: 'v2', IfMatch: '"0000"' })),
    );
    expect(stale.$metadata.httpStatusCode).toBe(412);
    expect(await bodyText((await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'cond' }))).Body)).toBe('v1');
    await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'cond', Body: 'v2', IfMatch: put.ETag }));
    expect(await bodyText((await fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'cond' }))).Body)).toBe('v2');
    await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'fresh', Body: 'x', IfNoneMatch: '*' }));
  });

  it('heads, deletes, and reports a missing key as NoSuchKey', async () => {
    await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'gone', Body: 'bye', StorageClass: 'STANDARD_IA' }));
    const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'gone' }));
    expect(head.ContentLength).toBe(3);
    expect(head.StorageClass).toBe('STANDARD_IA');
    await fx.s3.send(new DeleteObjectCommand({ Bucket: 'sdk', Key: 'gone' }));
    const missing = await failure(fx.s3.send(new GetObjectCommand({ Bucket: 'sdk', Key: 'gone' })));
    expect(missing.name).toBe('NoSuchKey');
    const bad = await failure(
      fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: 'x', Body: 'y', StorageClass: 'GLACIER' })),
    );
    expect(bad.name).toBe('InvalidStorageClass');
  });

  it('deletes many keys at once', async () => {
    for (const key of ['m/1', 'm/2', 'm/3'])
      await fx.s3.send(new PutObjectCommand({ Bucket: 'sdk', Key: key, Body: key }));
    const result = await fx.s3.send(
      new DeleteObjectsCommand({
        Bucket: 'sdk',
        Delete: { Objects: [{ Key: 'm/1' }, { Key: 'm/2' }, { Key: 'm/none' }] },
      }),
    );
    expect(result.Deleted?.map((d) => d.Key).sort()).toEqual(['m/1', 'm/2', 'm/none']);
    const left = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'sdk', Prefix: 'm/' }));
    expect(left.Contents?.map((c) => c.Key)).toEqual(['m/3']);
  });

  it('copies with COPY, REPLACE and MERGE directives and copy-source conditionals', async () => {
    const source = await fx.s3.send(
      new PutObjectCommand({
        Bucket: 'sdk',
        Key: 'src',
        Body: 'copy me',
        ContentType: 'text/x-a',
        Metadata: { a: '1', b: '2' },
      }),
    );
    const copied = await fx.s3.send(new CopyObjectCommand({ Bucket: 'sdk', Key: 'dst-copy', CopySource: 'sdk/src' }));
    expect(copied.CopyObjectResult?.ETag).toBe(source.ETag);
    const copy = await fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'dst-copy' }));
    expect(copy.ContentType).toBe('text/x-a');
    expect(copy.Metadata).toEqual({ a: '1', b: '2' });

    await fx.s3.send(
      new CopyObjectCommand({
        Bucket: 'sdk',
        Key: 'dst-replace',
        CopySource: 'sdk/src',
        MetadataDirective: 'REPLACE',
        ContentType: 'text/x-b',
        Metadata: { c: '3' },
      }),
    );
    const replaced = await fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'dst-replace' }));
    expect(replaced.ContentType).toBe('text/x-b');
    expect(replaced.Metadata).toEqual({ c: '3' });

    await fx.s3.send(
      new CopyObjectCommand({
        Bucket: 'sdk',
        Key: 'dst-merge',
        CopySource: 'sdk/src',
        MetadataDirective: 'MERGE' as 'REPLACE',
        Metadata: { b: 'two', c: '3' },
      }),
    );
    const merged = await fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'dst-merge' }));
    expect(merged.ContentType).toBe('text/x-a');
    expect(merged.Metadata).toEqual({ a: '1', b: 'two', c: '3' });

    const refused = await failure(
      fx.s3.send(
        new CopyObjectCommand({ Bucket: 'sdk', Key: 'dst-none', CopySource: 'sdk/src', CopySourceIfMatch: '"0000"' }),
      ),
    );
    expect(refused.$metadata.httpStatusCode).toBe(412);
    const self = await failure(fx.s3.send(new CopyObjectCommand({ Bucket: 'sdk', Key: 'src', CopySource: 'sdk/src' })));
    expect(self.name).toBe('InvalidRequest');
    expect(
      (await failure(fx.s3.send(new HeadObjectCommand({ Bucket: 'sdk', Key: 'dst-none' })))).$metadata.httpStatusCode,
    ).toBe(404);
  });

  it('lists with v1 and v2: prefix, delimiter, pagination, start-after, url encoding', async () => {
    await fx.s3.send(new CreateBucketCommand({ Bucket: 'listing' }));
    const keys = ['a/1', 'a/2', 'a/b/3', 'b/1', 'c', 'd e+f'];
    for (const key of keys) await fx.s3.send(new PutObjectCommand({ Bucket: 'listing', Key: key, Body: key }));
    const top = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'listing', Delimiter: '/' }));
    expect(top.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['a/', 'b/']);
    expect(top.Contents?.map((c) => c.Key)).toEqual(['c', 'd e+f']);
    expect(top.KeyCount).toBe(4);
    const underA = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'listing', Prefix: 'a/', Delimiter: '/' }));
    expect(underA.Contents?.map((c) => c.Key)).toEqual(['a/1', 'a/2']);
    expect(underA.CommonPrefixes?.map((p) => p.Prefix)).toEqual(['a/b/']);

    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await fx.s3.send(
        new ListObjectsV2Command({ Bucket: 'listing', MaxKeys: 2, ContinuationToken: token }),
      );
      seen.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    expect(seen).toEqual(keys);
    const after = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'listing', StartAfter: 'b/1' }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(['c', 'd e+f']);

    // v1 with a delimiter: NextMarker may be a common prefix, and resuming from it does not repeat it.
    const v1: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await fx.s3.send(
        new ListObjectsCommand({ Bucket: 'listing', Delimiter: '/', MaxKeys: 1, Marker: marker }),
      );
      v1.push(...(page.Contents ?? []).map((c) => c.Key!), ...(page.CommonPrefixes ?? []).map((p) => p.Prefix!));
      if (!page.IsTruncated) break;
      marker = page.NextMarker;
    }
    expect(v1).toEqual(['a/', 'b/', 'c', 'd e+f']);
    // With encoding-type=url the keys come back percent-encoded (the SDK leaves them so).
    const encoded = await fx.s3.send(new ListObjectsV2Command({ Bucket: 'listing', Prefix: 'd', EncodingType: 'url' }));
    expect(encoded.Contents?.map((c) => c.Key)).toEqual(['d%20e%2Bf']);
  });
});
