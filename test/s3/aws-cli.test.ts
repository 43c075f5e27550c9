import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsCliEnv } from '../helpers/aws-cli.ts';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { listTree, makeTree, md5Hex, run, s3Client, s3CredentialsOf, s3Port, tool } from './helpers.ts';

const MiB = 1024 * 1024;
// The AWS CLI v2 (Debian's awscli; .ci/apt-packages), else whatever `aws` is on PATH.
const AWS = tool('aws');

describe('S3 API with the AWS CLI', () => {
  let ledge: TestLedge;
  let s3: S3Client;
  let env: NodeJS.ProcessEnv;
  let endpoint: string;
  const aws = (...args: string[]) => run(AWS, ['--endpoint-url', endpoint, ...args], { env });

  beforeAll(async () => {
    ledge = await startLedge();
    const credentials = await s3CredentialsOf(ledge);
    s3 = s3Client(ledge, credentials);
    endpoint = `http://127.0.0.1:${s3Port(ledge)}`;
    env = awsCliEnv(tempDir('ledge-aws-'), credentials);
    await aws('s3', 'mb', 's3://cli');
  });
  afterAll(async () => {
    s3?.destroy();
    await ledge?.close();
  });

  it('syncs a tree of 1,000 files up and back down, and lists it with delimiters', { timeout: 300_000 }, async () => {
    const source = tempDir('ledge-tree-');
    const paths = makeTree(source, 1000);
    await aws('s3', 'sync', source, 's3://cli/tree/', '--only-show-errors');
    let count = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: 'cli', Prefix: 'tree/', ContinuationToken: token }),
      );
      count += page.KeyCount ?? 0;
      token = page.NextContinuationToken;
    } while (token);
    expect(count).toBe(1000);
    // A second sync finds nothing to do (sizes and times match what the listing says).
    const again = await aws('s3', 'sync', source, 's3://cli/tree/');
    expect(again.stdout.trim()).toBe('');

    const top = await aws('s3', 'ls', 's3://cli/tree/');
    expect(top.stdout.match(/PRE d\d\//g)?.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `PRE d${i}/`));
    const leaf = await aws('s3', 'ls', 's3://cli/tree/d3/e4/');
    expect(leaf.stdout.split('\n').filter((line) => line.includes('.txt'))).toHaveLength(10);

    const target = tempDir('ledge-tree-back-');
    await aws('s3', 'sync', 's3://cli/tree/', target, '--only-show-errors');
    expect(listTree(target)).toEqual(paths);
    for (const path of [paths[0]!, paths[500]!, paths[999]!]) {
      expect(readFileSync(join(target, path), 'utf8')).toBe(readFileSync(join(source, path), 'utf8'));
    }
  });

  it(
    'copies a large file as multipart (upload, server-side copy with UploadPartCopy, download)',
    { timeout: 300_000 },
    async () => {
      const dir = tempDir('ledge-large-');
      const data = Buffer.alloc(20 * MiB);
      for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
      writeFileSync(join(dir, 'large.bin'), data);
      await aws('s3', 'cp', join(dir, 'large.bin'), 's3://cli/large.bin', '--only-show-errors');
      const head = await s3.send(new HeadObjectCommand({ Bucket: 'cli', Key: 'large.bin' }));
      // 8 + 8 + 4 MiB parts.
      expect(head.ETag).toMatch(/^"[0-9a-f]{32}-3"$/);
      expect(head.ContentLength).toBe(data.length);

      // As against R2: a multipart copy must not copy tags (GetObjectTagging is not offered, 501).
      await aws(
        's3',
        'cp',
        's3://cli/large.bin',
        's3://cli/large-copy.bin',
        '--copy-props',
        'metadata-directive',
        '--only-show-errors',
      );
      const copy = await s3.send(new HeadObjectCommand({ Bucket: 'cli', Key: 'large-copy.bin' }));
      expect(copy.ETag).toMatch(/-3"$/);
      await aws('s3', 'cp', 's3://cli/large-copy.bin', join(dir, 'back.bin'), '--only-show-errors');
      expect(md5Hex(readFileSync(join(dir, 'back.bin')))).toBe(md5Hex(data));

      const meta = await aws('s3api', 'head-object', '--bucket', 'cli', '--key', 'large.bin');
      expect(JSON.parse(meta.stdout)).toMatchObject({ ContentLength: data.length, ETag: head.ETag });
    },
  );

  it('presigns a GET that plain HTTP can use, and removes objects and buckets', async () => {
    const dir = tempDir('ledge-presign-');
    writeFileSync(join(dir, 'note.txt'), 'presigned by the aws cli');
    await aws(
      's3',
      'cp',
      join(dir, 'note.txt'),
      's3://cli/note.txt',
      '--content-type',
      'text/plain',
      '--only-show-errors',
    );
    const url = (await aws('s3', 'presign', 's3://cli/note.txt', '--expires-in', '60')).stdout.trim();
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('presigned by the aws cli');
    expect(response.headers.get('content-type')).toBe('text/plain');

    await aws('s3', 'mb', 's3://cli-empty');
    await aws('s3api', 'put-object', '--bucket', 'cli-empty', '--key', 'k', '--body', join(dir, 'note.txt'));
    await aws('s3', 'rm', 's3://cli-empty/k');
    await aws('s3', 'rb', 's3://cli-empty');
    const buckets = await aws('s3', 'ls');
    expect(buckets.stdout).toContain(' cli\n');
    expect(buckets.stdout).not.toContain('cli-empty');
  });
});
