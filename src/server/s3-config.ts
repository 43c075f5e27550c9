import type { S3Settings } from '../storage/index.ts';

/** The `ledge server` flags that put blobs on an S3-compatible service (secrets come from the environment only). */
export interface S3Flags {
  s3Endpoint?: string | undefined;
  s3Bucket?: string | undefined;
  s3Region?: string | undefined;
  s3ForcePathStyle?: string | boolean | undefined;
  s3Prefix?: string | undefined;
}

/**
 * The S3 blob store settings, or undefined for the filesystem store (the default): a bucket or an
 * endpoint selects S3. Flags win over LEDGE_S3_* variables; the keys are read from the environment only
 * (LEDGE_S3_ACCESS_KEY_ID / LEDGE_S3_SECRET_ACCESS_KEY, else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY),
 * so they never show in a process list. With neither, the SDK's own chain applies (instance roles, ...).
 */
export function resolveS3Settings(flags: S3Flags, env: NodeJS.ProcessEnv): S3Settings | undefined {
  const endpoint = nonEmpty(flags.s3Endpoint ?? env['LEDGE_S3_ENDPOINT']);
  const bucket = nonEmpty(flags.s3Bucket ?? env['LEDGE_S3_BUCKET']);
  if (endpoint === undefined && bucket === undefined) return undefined;
  if (bucket === undefined) throw new Error('--s3-endpoint needs a bucket: set --s3-bucket (env LEDGE_S3_BUCKET)');
  if (endpoint !== undefined && !/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new Error(`invalid --s3-endpoint ${endpoint}: expected http(s)://host[:port]`);
  }
  const accessKeyId = nonEmpty(env['LEDGE_S3_ACCESS_KEY_ID']) ?? nonEmpty(env['AWS_ACCESS_KEY_ID']);
  const secretAccessKey = nonEmpty(env['LEDGE_S3_SECRET_ACCESS_KEY']) ?? nonEmpty(env['AWS_SECRET_ACCESS_KEY']);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new Error('S3 credentials need both LEDGE_S3_ACCESS_KEY_ID and LEDGE_S3_SECRET_ACCESS_KEY (or neither)');
  }
  const prefix = nonEmpty(flags.s3Prefix ?? env['LEDGE_S3_PREFIX']) ?? '';
  return {
    endpoint,
    region: nonEmpty(flags.s3Region ?? env['LEDGE_S3_REGION']) ?? 'us-east-1',
    bucket,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: toBoolean(flags.s3ForcePathStyle ?? env['LEDGE_S3_FORCE_PATH_STYLE'], '--s3-force-path-style'),
    // Blob keys are `<prefix><id>`: a prefix is a folder of its own, so `ledge` means `ledge/`.
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function toBoolean(value: string | boolean | undefined, name: string): boolean {
  if (value === undefined || value === '' || typeof value === 'boolean') return value === true;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`invalid ${name} value ${value}: use true or false`);
}
