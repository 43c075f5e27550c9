import { hostnameOf } from '../shared/hostname.ts';
import { S3Errors } from './errors.ts';

/** Which account, bucket and key a request names. */
export interface S3Address {
  /** From the host (`<account_id>.r2.<domain>`); undefined for a bare address (the credential decides). */
  accountId: string | undefined;
  bucket: string | undefined;
  key: string | undefined;
}

const ACCOUNT_LABEL = /^[0-9a-f]{32}$/;

/**
 * As on R2: `<account_id>.r2.<domain>` names the account, `<bucket>.<account_id>.r2.<domain>` the bucket too
 * (virtual-hosted style); otherwise the bucket is the first path segment (path style). Any other host
 * (127.0.0.1, localhost) is a bare address and takes path style.
 */
export function addressOf(hostHeader: string | undefined, rawPath: string): S3Address {
  const labels = hostnameOf(hostHeader).split('.');
  let accountId: string | undefined;
  let hostBucket: string | undefined;
  for (let i = 0; i + 1 < labels.length; i++) {
    if (ACCOUNT_LABEL.test(labels[i]!) && labels[i + 1] === 'r2') {
      accountId = labels[i];
      if (i > 0) hostBucket = labels.slice(0, i).join('.');
      break;
    }
  }
  const path = rawPath.startsWith('/') ? rawPath.slice(1) : rawPath;
  if (hostBucket !== undefined) return { accountId, bucket: hostBucket, key: nonEmpty(decode(path)) };
  const slash = path.indexOf('/');
  const bucket = decode(slash === -1 ? path : path.slice(0, slash));
  const key = slash === -1 ? undefined : decode(path.slice(slash + 1));
  return { accountId, bucket: nonEmpty(bucket), key: nonEmpty(key) };
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw S3Errors.invalidArgument('The request path is not valid percent-encoded UTF-8.');
  }
}

const nonEmpty = (text: string | undefined) => (text === '' ? undefined : text);
