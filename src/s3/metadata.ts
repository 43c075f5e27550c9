import type { IncomingHttpHeaders } from 'node:http';
import type { CustomMetadata, HttpMetadata, ObjectRecord, StorageClass } from '../storage/index.ts';
import { S3Errors } from './errors.ts';

const META_PREFIX = 'x-amz-meta-';

/** HTTP metadata from request headers (PutObject, CreateMultipartUpload, CopyObject with REPLACE). */
export function httpMetadataFrom(headers: IncomingHttpHeaders): HttpMetadata {
  const metadata: HttpMetadata = {};
  const contentType = headers['content-type'];
  if (contentType) metadata.contentType = contentType;
  if (headers['content-language']) metadata.contentLanguage = String(headers['content-language']);
  if (headers['content-disposition']) metadata.contentDisposition = headers['content-disposition'];
  // aws-chunked is how the body travelled, not how the object is encoded.
  const encoding = String(headers['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e.toLowerCase() !== 'aws-chunked')
    .join(', ');
  if (encoding) metadata.contentEncoding = encoding;
  if (headers['cache-control']) metadata.cacheControl = headers['cache-control'];
  const expires = headers.expires;
  if (expires && !Number.isNaN(Date.parse(expires))) metadata.cacheExpiry = Date.parse(expires);
  return metadata;
}

/** x-amz-meta-* headers, their values RFC 2047-decoded as R2 does. */
export function customMetadataFrom(rawHeaders: readonly string[]): CustomMetadata {
  const metadata: CustomMetadata = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!name.startsWith(META_PREFIX)) continue;
    const key = name.slice(META_PREFIX.length);
    const value = decodeRfc2047(utf8Header(rawHeaders[i + 1]!.trim()));
    metadata[key] = metadata[key] === undefined ? value : `${metadata[key]},${value}`;
  }
  return metadata;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Node reads header bytes as Latin-1; a client that sent UTF-8 as is (the AWS SDK does for x-amz-meta-*)
 * meant UTF-8, so valid UTF-8 is read as such.
 */
function utf8Header(value: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  try {
    return strictUtf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}

/** The response headers that describe an object (GET, HEAD). */
export function objectHeaders(object: ObjectRecord): Record<string, string> {
  const headers: Record<string, string> = {
    etag: `"${object.etag}"`,
    'last-modified': new Date(object.uploaded).toUTCString(),
    'accept-ranges': 'bytes',
    'content-type': object.httpMetadata.contentType ?? 'application/octet-stream',
  };
  const http = object.httpMetadata;
  if (http.contentLanguage) headers['content-language'] = http.contentLanguage;
  if (http.contentDisposition) headers['content-disposition'] = http.contentDisposition;
  if (http.contentEncoding) headers['content-encoding'] = http.contentEncoding;
  if (http.cacheControl) headers['cache-control'] = http.cacheControl;
  if (http.cacheExpiry !== undefined) headers['expires'] = new Date(http.cacheExpiry).toUTCString();
  if (object.storageClass !== 'Standard') headers['x-amz-storage-class'] = s3StorageClass(object.storageClass);
  for (const [name, value] of Object.entries(object.customMetadata))
    headers[`${META_PREFIX}${name}`] = encodeRfc2047(value);
  return headers;
}

/** A header value must be ASCII: others go out as an RFC 2047 encoded word, as R2 sends them. */
export function encodeRfc2047(value: string): string {
  if (/^[\x20-\x7e\t]*$/.test(value)) return value;
  return `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

const ENCODED_WORD = /=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g;

/** Decodes RFC 2047 encoded words (UTF-8 or Latin-1, B or Q); other text stays as it is. */
export function decodeRfc2047(value: string): string {
  if (!value.includes('=?')) return value;
  // Whitespace between two adjacent encoded words is not part of the text (RFC 2047 §6.2).
  const joined = value.replace(/\?=\s+=\?/g, '?==?');
  return joined.replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
    const set = charset.toLowerCase().split('*')[0];
    if (set !== 'utf-8' && set !== 'iso-8859-1' && set !== 'us-ascii') return word;
    const bytes =
      encoding.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
            'latin1',
          );
    return bytes.toString(set === 'utf-8' ? 'utf8' : 'latin1');
  });
}

/** S3's storage class names for the engine's. */
export function s3StorageClass(storageClass: StorageClass): string {
  return storageClass === 'InfrequentAccess' ? 'STANDARD_IA' : 'STANDARD';
}

/** x-amz-storage-class: STANDARD and STANDARD_IA, as R2 offers them. */
export function storageClassFrom(value: string | string[] | undefined): StorageClass | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'STANDARD') return 'Standard';
  if (value === 'STANDARD_IA') return 'InfrequentAccess';
  throw S3Errors.invalidStorageClass();
}
