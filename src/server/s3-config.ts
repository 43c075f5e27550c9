import type { S3Settings } from '../storage/index.ts';
import { SettingError, type Settings } from './settings/index.ts';

/**
 * The S3 blob store settings, or undefined for the filesystem store (the default): a bucket or an
 * endpoint selects S3. The keys come from the environment only (LEDGE_S3_ACCESS_KEY_ID /
 * LEDGE_S3_SECRET_ACCESS_KEY, else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; see settings/schema.ts), so
 * they never show in a process list. With neither, the SDK's own chain applies (instance roles, ...).
 */
export function s3Settings(settings: Settings): S3Settings | undefined {
  const { s3Endpoint: endpoint, s3Bucket: bucket, s3AccessKeyId: accessKeyId } = settings;
  const secretAccessKey = settings.s3SecretAccessKey;
  if (endpoint === undefined && bucket === undefined) return undefined;
  if (bucket === undefined)
    throw new SettingError('--s3-endpoint needs a bucket: set --s3-bucket (env LEDGE_S3_BUCKET)');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new SettingError(
      'S3 credentials need both LEDGE_S3_ACCESS_KEY_ID and LEDGE_S3_SECRET_ACCESS_KEY (or neither)',
    );
  }
  const prefix = settings.s3Prefix;
  return {
    endpoint,
    region: settings.s3Region,
    bucket,
    accessKeyId,
    secretAccessKey,
    forcePathStyle: settings.s3ForcePathStyle,
    // Blob keys are `<prefix><id>`: a prefix is a folder of its own, so `ledge` means `ledge/`.
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
  };
}
