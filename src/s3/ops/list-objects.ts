import type { ListResult, ObjectRecord } from '../../storage/index.ts';
import { xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Errors } from '../errors.ts';
import { s3StorageClass } from '../metadata.ts';
import { awsEncode } from '../sigv4.ts';
import { renderXml, type XmlNode } from '../xml.ts';
import { owner } from './buckets.ts';

/**
 * A key past every key under `prefix` (keys are at most 1024 bytes, and U+10FFFF is the largest code point),
 * so a listing resumed after a common prefix does not fold the same prefix again.
 */
export function pastPrefix(prefix: string): string {
  return prefix + '\u{10FFFF}'.repeat(257);
}

interface Params {
  prefix: string;
  delimiter: string | undefined;
  maxKeys: number;
  encode: boolean;
}

function commonParams(request: S3Request): Params {
  const query = request.query;
  const rawMax = query.get('max-keys');
  if (rawMax !== null && !/^\d+$/.test(rawMax))
    throw S3Errors.invalidArgument('Provided max-keys not an integer or within integer range');
  const encoding = query.get('encoding-type');
  if (encoding !== null && encoding !== 'url')
    throw S3Errors.invalidArgument('Invalid Encoding Method specified in Request');
  return {
    prefix: query.get('prefix') ?? '',
    delimiter: query.get('delimiter') || undefined,
    // S3 answers at most 1000 keys whatever max-keys says.
    maxKeys: rawMax === null ? 1000 : Math.min(Number(rawMax), 1000),
    encode: encoding === 'url',
  };
}

async function list(request: S3Request, params: Params, position: { cursor?: string; startAfter?: string }) {
  const bucket = await request.bucket();
  if (params.maxKeys === 0)
    return { objects: [], delimitedPrefixes: [], truncated: false, cursor: undefined } as ListResult;
  return request.storage.list(bucket, {
    prefix: params.prefix,
    delimiter: params.delimiter,
    limit: params.maxKeys,
    ...position,
  });
}

function contents(objects: ObjectRecord[], show: (text: string) => string, withOwner: string | undefined): XmlNode[] {
  return objects.map((o) => ({
    Key: show(o.key),
    LastModified: new Date(o.uploaded).toISOString(),
    ETag: `"${o.etag}"`,
    Size: o.size,
    StorageClass: s3StorageClass(o.storageClass),
    Owner: withOwner === undefined ? undefined : owner(withOwner),
  }));
}

/** ListObjectsV2: prefix, delimiter, max-keys, start-after, continuation-token, fetch-owner, encoding-type. */
export async function listObjectsV2(request: S3Request): Promise<S3Reply> {
  const params = commonParams(request);
  const query = request.query;
  const token = query.get('continuation-token') ?? undefined;
  if (token === '') throw S3Errors.invalidArgument('The continuation token provided is incorrect');
  const startAfter = query.get('start-after') ?? undefined;
  const result = await list(request, params, { cursor: token, startAfter });
  const show = (text: string) => (params.encode ? awsEncode(text, true) : text);
  return xmlReply(
    renderXml('ListBucketResult', {
      Name: request.bucketName!,
      Prefix: show(params.prefix),
      Delimiter: params.delimiter === undefined ? undefined : show(params.delimiter),
      MaxKeys: params.maxKeys,
      EncodingType: params.encode ? 'url' : undefined,
      KeyCount: result.objects.length + result.delimitedPrefixes.length,
      IsTruncated: result.truncated,
      ContinuationToken: token,
      NextContinuationToken: result.cursor,
      StartAfter: startAfter === undefined ? undefined : show(startAfter),
      Contents: contents(result.objects, show, query.get('fetch-owner') === 'true' ? request.accountId : undefined),
      CommonPrefixes: result.delimitedPrefixes.map((p) => ({ Prefix: show(p) })),
    }),
  );
}

/** ListObjects (v1): prefix, delimiter, max-keys, marker, encoding-type; NextMarker when truncated. */
export async function listObjectsV1(request: S3Request): Promise<S3Reply> {
  const params = commonParams(request);
  const marker = request.query.get('marker') ?? '';
  // A marker that is a common prefix (what NextMarker names with a delimiter) resumes past all of it.
  const folded =
    params.delimiter !== undefined && marker.endsWith(params.delimiter) && marker.startsWith(params.prefix);
  const result = await list(request, params, {
    startAfter: marker === '' ? undefined : folded ? pastPrefix(marker) : marker,
  });
  const show = (text: string) => (params.encode ? awsEncode(text, true) : text);
  const lastKey = result.objects.at(-1)?.key;
  const lastPrefix = result.delimitedPrefixes.at(-1);
  const last =
    lastKey === undefined
      ? lastPrefix
      : lastPrefix === undefined
        ? lastKey
        : Buffer.compare(Buffer.from(lastKey), Buffer.from(lastPrefix)) > 0
          ? lastKey
          : lastPrefix;
  return xmlReply(
    renderXml('ListBucketResult', {
      Name: request.bucketName!,
      Prefix: show(params.prefix),
      Marker: show(marker),
      NextMarker: result.truncated && last !== undefined ? show(last) : undefined,
      MaxKeys: params.maxKeys,
      Delimiter: params.delimiter === undefined ? undefined : show(params.delimiter),
      EncodingType: params.encode ? 'url' : undefined,
      IsTruncated: result.truncated,
      Contents: contents(result.objects, show, request.accountId),
      CommonPrefixes: result.delimitedPrefixes.map((p) => ({ Prefix: show(p) })),
    }),
  );
}
