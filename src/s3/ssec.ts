import type { IncomingHttpHeaders } from 'node:http';
import { ssecKeyFrom, type SsecKey, type SsecRecord } from '../storage/index.ts';
import { S3Error, S3Errors } from './errors.ts';

/** The request headers of SSE-C for the object written or read, and for a copy's source. */
export const SSEC_PREFIX = 'x-amz-server-side-encryption-customer-';
export const COPY_SOURCE_SSEC_PREFIX = 'x-amz-copy-source-server-side-encryption-customer-';

/**
 * The customer key a request carries (`<prefix>algorithm`, `-key` base64 of 32 bytes, `-key-MD5` base64),
 * checked as S3 checks it; undefined when it carries none. S3 refuses these headers over plain HTTP;
 * Ledge's S3 port is plain HTTP (TLS is the front proxy's job), so they are taken as sent.
 */
export function ssecFrom(headers: IncomingHttpHeaders, prefix = SSEC_PREFIX): SsecKey | undefined {
  const algorithm = single(headers[`${prefix}algorithm`]);
  const key = single(headers[`${prefix}key`]);
  const md5 = single(headers[`${prefix}key-md5`]);
  if (algorithm === undefined && key === undefined && md5 === undefined) return undefined;
  if (algorithm === undefined) {
    throw S3Errors.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.',
    );
  }
  if (algorithm !== 'AES256') {
    throw new S3Error(
      400,
      'InvalidEncryptionAlgorithmError',
      'The encryption request you specified is not valid. The valid value is AES256.',
    );
  }
  if (key === undefined) {
    throw S3Errors.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.',
    );
  }
  if (md5 === undefined) {
    throw S3Errors.invalidArgument(
      'Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.',
    );
  }
  const raw = /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64') : Buffer.alloc(0);
  if (raw.length !== 32) throw S3Errors.invalidArgument('The secret key was invalid for the specified algorithm.');
  try {
    return ssecKeyFrom(raw, md5);
  } catch (error) {
    throw S3Errors.invalidArgument(error instanceof Error ? error.message : 'Invalid SSE-C key.');
  }
}

/** What a response about an SSE-C object echoes: the algorithm and the key's MD5. */
export function ssecEcho(ssec: Pick<SsecRecord, 'keyMd5'> | undefined): Record<string, string> {
  return ssec ? { [`${SSEC_PREFIX}algorithm`]: 'AES256', [`${SSEC_PREFIX}key-md5`]: ssec.keyMd5 } : {};
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
