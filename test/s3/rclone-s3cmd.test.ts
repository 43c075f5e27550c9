import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/ledge.ts';
import { listTree, makeTree, md5Hex, run, s3Port, tool } from './helpers.ts';
import { useS3Fixture } from './fixture.ts';

const MiB = 1024 * 1024;
const RCLONE = tool('rclone');
const S3CMD = tool('s3cmd');

async function countKeys(s3: S3Client, bucket: string, prefix: string): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    count += page.KeyCount ?? 0;
    token = page.NextContinuationToken;
  } while (token);
  return count;
}

function largeFile(dir: string, size: number): Buffer {
  const data = Buffer.alloc(size);
  for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2246822519) >>> 0, i);
  writeFileSync(join(dir, 'large.bin'), data);
  return data;
}

describe('S3 API with rclone and s3cmd', () => {
  const fx = useS3Fixture({ buckets: [] });

  it(
    'rclone (provider Cloudflare) syncs 1,000 files, lists directories, copies a large file as multipart',
    { timeout: 300_000 },
    async () => {
      // rclone's remote from the environment, as its docs configure R2.
      const env = {
        PATH: process.env['PATH'],
        HOME: tempDir('ledge-rclone-'),
        RCLONE_CONFIG_LEDGE_TYPE: 's3',
        RCLONE_CONFIG_LEDGE_PROVIDER: 'Cloudflare',
        RCLONE_CONFIG_LEDGE_ACCESS_KEY_ID: fx.credentials.accessKeyId,
        RCLONE_CONFIG_LEDGE_SECRET_ACCESS_KEY: fx.credentials.secretAccessKey,
        RCLONE_CONFIG_LEDGE_ENDPOINT: `http://127.0.0.1:${s3Port(fx.ledge)}`,
        RCLONE_CONFIG_LEDGE_REGION: 'auto',
      };
      const rclone = (...args: string[]) => run(RCLONE, ['--config', '/dev/null', ...args], { env });
      await rclone('mkdir', 'ledge:rclone');
      const source = tempDir('ledge-tree-');
      const paths = makeTree(source, 1000);
      await rclone('sync', source, 'ledge:rclone/tree', '--transfers', '8', '--checkers', '8');
      expect(await countKeys(fx.s3, 'rclone', 'tree/')).toBe(1000);
      await rclone('check', source, 'ledge:rclone/tree');
      const dirs = await rclone('lsf', '--dirs-only', 'ledge:rclone/tree');
      expect(dirs.stdout.split('\n').filter(Boolean).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `d${i}/`));

      const back = tempDir('ledge-tree-back-');
      await rclone('copy', 'ledge:rclone/tree', back, '--transfers', '8');
      expect(listTree(back)).toEqual(paths);

      const dir = tempDir('ledge-large-');
      const data = largeFile(dir, 12 * MiB);
      await rclone(
        'copy',
        join(dir, 'large.bin'),
        'ledge:rclone/big',
        '--s3-upload-cutoff',
        '5M',
        '--s3-chunk-size',
        '5M',
      );
      const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 'rclone', Key: 'big/large.bin' }));
      expect(head.ETag).toMatch(/-3"$/);
      await rclone('copy', 'ledge:rclone/big/large.bin', join(dir, 'back'));
      expect(md5Hex(readFileSync(join(dir, 'back', 'large.bin')))).toBe(md5Hex(data));
      await rclone('purge', 'ledge:rclone/big');
      expect(await countKeys(fx.s3, 'rclone', 'big/')).toBe(0);
    },
  );

  it(
    's3cmd syncs 1,000 files, lists with delimiters, puts a large file as multipart',
    { timeout: 300_000 },
    async () => {
      const home = tempDir('ledge-s3cmd-');
      const host = `127.0.0.1:${s3Port(fx.ledge)}`;
      // Path style on a bare address: host_bucket without %(bucket)s.
      writeFileSync(
        join(home, 's3cfg'),
        [
          '[default]',
          `access_key = ${fx.credentials.accessKeyId}`,
          `secret_key = ${fx.credentials.secretAccessKey}`,
          `host_base = ${host}`,
          `host_bucket = ${host}`,
          'bucket_location = auto',
          'use_https = False',
          'signature_v2 = False',
          '',
        ].join('\n'),
      );
      const s3cmd = (...args: string[]) =>
        run(S3CMD, ['-c', join(home, 's3cfg'), ...args], { env: { PATH: process.env['PATH'], HOME: home } });
      await s3cmd('mb', 's3://s3cmd');
      const source = tempDir('ledge-tree-');
      const paths = makeTree(source, 1000);
      await s3cmd('sync', '--no-progress', `${source}/`, 's3://s3cmd/tree/');
      expect(await countKeys(fx.s3, 's3cmd', 'tree/')).toBe(1000);
      const top = await s3cmd('ls', 's3://s3cmd/tree/');
      expect(top.stdout.match(/DIR\s+s3:\/\/s3cmd\/tree\/d\d\//g)).toHaveLength(10);
      const back = tempDir('ledge-tree-back-');
      await s3cmd('sync', '--no-progress', 's3://s3cmd/tree/', `${back}/`);
      expect(listTree(back)).toEqual(paths);

      const dir = tempDir('ledge-large-');
      const data = largeFile(dir, 11 * MiB);
      await s3cmd(
        'put',
        '--no-progress',
        '--multipart-chunk-size-mb=5',
        join(dir, 'large.bin'),
        's3://s3cmd/large.bin',
      );
      const head = await fx.s3.send(new HeadObjectCommand({ Bucket: 's3cmd', Key: 'large.bin' }));
      expect(head.ETag).toMatch(/-3"$/);
      await s3cmd('get', '--no-progress', 's3://s3cmd/large.bin', join(dir, 'back.bin'));
      expect(md5Hex(readFileSync(join(dir, 'back.bin')))).toBe(md5Hex(data));
      await s3cmd('del', 's3://s3cmd/large.bin');
      expect(await countKeys(fx.s3, 's3cmd', 'large.bin')).toBe(0);
    },
  );
});
