import { describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';

const s3 = (flags: Parameters<typeof resolveServerConfig>[0], env: NodeJS.ProcessEnv = {}) =>
  resolveServerConfig(flags, env).s3;

describe('S3 blob store settings', () => {
  it('keeps blobs on the filesystem unless a bucket or an endpoint is set', () => {
    expect(s3({}, { LEDGE_S3_REGION: 'eu-west-1', LEDGE_S3_ACCESS_KEY_ID: 'k', LEDGE_S3_SECRET_ACCESS_KEY: 's' })).toBe(
      undefined,
    );
  });

  it('reads LEDGE_S3_* with defaults; flags win over the environment', () => {
    const env = {
      LEDGE_S3_ENDPOINT: 'http://env:9000',
      LEDGE_S3_BUCKET: 'env-bucket',
      LEDGE_S3_FORCE_PATH_STYLE: 'true',
      LEDGE_S3_PREFIX: 'ledge',
      LEDGE_S3_ACCESS_KEY_ID: 'key',
      LEDGE_S3_SECRET_ACCESS_KEY: 'secret',
    };
    expect(s3({}, env)).toEqual({
      endpoint: 'http://env:9000',
      region: 'us-east-1',
      bucket: 'env-bucket',
      accessKeyId: 'key',
      secretAccessKey: 'secret',
      forcePathStyle: true,
      prefix: 'ledge/',
    });
    expect(
      s3(
        {
          s3Endpoint: 'https://flag',
          s3Bucket: 'flag-bucket',
          s3Region: 'auto',
          s3ForcePathStyle: 'false',
          s3Prefix: 'a/b/',
        },
        env,
      ),
    ).toMatchObject({
      endpoint: 'https://flag',
      bucket: 'flag-bucket',
      region: 'auto',
      forcePathStyle: false,
      prefix: 'a/b/',
    });
  });

  it('takes AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when the LEDGE_S3_ keys are unset', () => {
    const env = { AWS_ACCESS_KEY_ID: 'aws-key', AWS_SECRET_ACCESS_KEY: 'aws-secret' };
    expect(s3({ s3Bucket: 'b-1' }, env)).toMatchObject({
      endpoint: undefined,
      accessKeyId: 'aws-key',
      secretAccessKey: 'aws-secret',
      forcePathStyle: false,
      prefix: '',
    });
  });

  it('refuses incomplete or malformed settings', () => {
    expect(() => s3({ s3Endpoint: 'http://127.0.0.1:9000' })).toThrow(/--s3-bucket/);
    expect(() => s3({ s3Endpoint: 'localhost:9000', s3Bucket: 'b-1' })).toThrow(/invalid --s3-endpoint/);
    expect(() => s3({ s3Bucket: 'b-1' }, { LEDGE_S3_ACCESS_KEY_ID: 'key' })).toThrow(/both/);
    expect(() => s3({ s3Bucket: 'b-1', s3ForcePathStyle: 'maybe' })).toThrow(/--s3-force-path-style/);
  });
});
