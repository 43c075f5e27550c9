import {
  conditionHolds,
  releaseBody,
  ssecAccess,
  type BucketRecord,
  type ObjectRecord,
  type ResolvedRange,
} from '../../storage/index.ts';
import { emptyReply, xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Error, S3Errors } from '../errors.ts';
import { customMetadataFrom, httpMetadataFrom, objectHeaders, storageClassFrom } from '../metadata.ts';
import { awsEncode } from '../sigv4.ts';
import { child, childrenNamed, childText, parseXml, readSmallBody, renderXml } from '../xml.ts';
import { ssecEcho, ssecFrom } from '../ssec.ts';
import { conditionFrom, strictConditionFrom } from './conditions.ts';

/** Bodies up to this size are read in one go (no stream per request), as the wire backend does. */
const BUFFERED_BODY_LIMIT = 64 * 1024;
const DELETE_BODY_LIMIT = 2 * 1024 * 1024;
const MAX_DELETE_KEYS = 1000;

/** Request headers for features R2 does not offer on object writes. */
const UNOFFERED_WRITE_HEADERS: [string, string][] = [
  ['x-amz-server-side-encryption', 'SSE-S3 / SSE-KMS'],
  ['x-amz-tagging', 'Object tagging'],
  ['x-amz-website-redirect-location', 'Website redirects'],
  ['x-amz-object-lock-mode', 'Object lock'],
  ['x-amz-object-lock-retain-until-date', 'Object lock'],
  ['x-amz-object-lock-legal-hold', 'Object lock'],
  ['x-amz-grant-read', 'Object ACLs'],
  ['x-amz-grant-full-control', 'Object ACLs'],
  ['x-amz-grant-read-acp', 'Object ACLs'],
  ['x-amz-grant-write-acp', 'Object ACLs'],
];

export function refuseUnoffered(request: S3Request): void {
  for (const [header, feature] of UNOFFERED_WRITE_HEADERS) {
    if (request.req.headers[header] !== undefined) throw S3Errors.notImplemented(feature);
  }
}

/** PutObject, with conditional PUT (If-Match / If-None-Match / If-(Un)Modified-Since -> 412). */
export async function putObject(request: S3Request): Promise<S3Reply> {
  refuseUnoffered(request);
  const headers = request.req.headers;
  const ssec = ssecFrom(headers);
  const bucket = await bucketForWrite(request);
  const body = request.body();
  const object = await request.storage.objects.put(bucket, request.key!, body.stream, {
    size: body.size,
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(request.req.rawHeaders),
    digests: body.declared,
    onlyIf: conditionFrom(headers),
    storageClass: storageClassFrom(headers['x-amz-storage-class']),
    ssec,
  });
  if (!object) throw S3Errors.preconditionFailed();
  return emptyReply(200, { etag: `"${object.etag}"`, ...checksumEcho(body.checksum), ...ssecEcho(object.ssec) });
}

/** `cf-create-bucket-if-missing: true` creates the bucket on the first write (R2's extension). */
async function bucketForWrite(request: S3Request): Promise<BucketRecord> {
  const existing = await request.storage.getBucket(request.accountId, request.bucketName!);
  if (existing) return existing;
  if (request.req.headers['cf-create-bucket-if-missing'] !== 'true') throw S3Errors.noSuchBucket();
  try {
    return await request.storage.buckets.create(request.accountId, { name: request.bucketName! });
  } catch {
    return request.bucket();
  }
}

export function checksumEcho(checksum: { name: string; value: () => string | undefined } | undefined) {
  const value = checksum?.value();
  return checksum && value !== undefined ? { [`x-amz-checksum-${checksum.name}`]: value } : {};
}

/** GetObject and HeadObject: conditionals, Range (GET only, as on R2), partNumber, response-* overrides. */
export async function getObject(request: S3Request): Promise<S3Reply> {
  const headers = request.req.headers;
  const ssec = ssecFrom(headers);
  const bucket = await request.bucket();
  const key = request.key!;
  const onlyIf = conditionFrom(headers);
  const partNumber = request.query.get('partNumber');
  const rangeHeader = request.method === 'HEAD' ? undefined : headers.range;
  let partRequest: { range: ResolvedRange | undefined; partsCount: number | undefined } | undefined;
  let found: ObjectRecord | undefined;
  if (partNumber !== null || request.method === 'HEAD') {
    if (partNumber !== null && rangeHeader) {
      throw S3Errors.invalidRequest('Cannot specify both Range header and partNumber query parameter');
    }
    found = await request.storage.objects.head(bucket, key);
    if (!found) throw S3Errors.noSuchKey();
    // HEAD of an SSE-C object needs its key too (S3's rule); the binding's head does not (R2's).
    if (request.method === 'HEAD') ssecAccess(found.ssec, ssec);
    if (partNumber !== null) partRequest = partRange(found, partNumber);
  }
  if (request.method === 'HEAD') {
    if (!conditionHolds(onlyIf, found)) notModifiedOrFailed(request, found!);
    const range = partRequest?.range;
    return { status: range ? 206 : 200, headers: describe(request, found!, range, partRequest?.partsCount) };
  }
  const result = await request.storage.objects.read(bucket, key, {
    onlyIf,
    range: partRequest ? partRequest.range : rangeHeader ? { header: rangeHeader } : undefined,
    bufferUpTo: BUFFERED_BODY_LIMIT,
    files: true,
    ssec,
  });
  if (!result) throw S3Errors.noSuchKey();
  if (result.status === 'precondition-failed') notModifiedOrFailed(request, result.object);
  const { object, range } = result;
  if (rangeHeader && range === undefined && unsatisfiable(rangeHeader, object.size)) {
    void releaseBody(result.body);
    throw S3Errors.invalidRange(object.size);
  }
  const out = describe(request, object, range, partRequest?.partsCount);
  // `local` was not asked for, so the body is never a file for the caller to open itself.
  return { status: range ? 206 : 200, headers: out, body: result.body, length: range ? range.length : object.size };
}

/** A failed read condition: If-Match / If-Unmodified-Since is 412, If-None-Match / If-Modified-Since 304. */
function notModifiedOrFailed(request: S3Request, object: ObjectRecord): never {
  if (!conditionHolds(strictConditionFrom(request.req.headers), object)) throw S3Errors.preconditionFailed();
  throw new S3Error(304, 'NotModified', 'Not Modified', {
    etag: `"${object.etag}"`,
    'last-modified': new Date(object.uploaded).toUTCString(),
  });
}

function describe(
  request: S3Request,
  object: ObjectRecord,
  range: ResolvedRange | undefined,
  partsCount: number | undefined,
): Record<string, string> {
  const out = { ...objectHeaders(object), ...responseOverrides(request.query) };
  if (partsCount !== undefined) out['x-amz-mp-parts-count'] = String(partsCount);
  if (range) out['content-range'] = `bytes ${range.offset}-${range.offset + range.length - 1}/${object.size}`;
  if (request.req.headers['x-amz-checksum-mode'] === 'ENABLED' && !range) Object.assign(out, storedChecksums(object));
  Object.assign(out, ssecEcho(object.ssec));
  out['content-length'] = String(range ? range.length : object.size);
  return out;
}

/**
 * A multipart object's part N is its N-th segment. Any other object has one part, the whole of it, answered
 * as S3 does: a 206 range over every byte, without `x-amz-mp-parts-count` (only multipart objects have one).
 */
function partRange(
  object: ObjectRecord,
  partNumber: string,
): { range: ResolvedRange | undefined; partsCount: number | undefined } {
  if (!/^\d+$/.test(partNumber) || Number(partNumber) < 1 || Number(partNumber) > 10_000) {
    throw S3Errors.invalidArgument('Part number must be an integer between 1 and 10000, inclusive');
  }
  const n = Number(partNumber);
  const multipart = /-\d+$/.test(object.etag);
  if (!multipart) {
    if (n !== 1) throw S3Errors.invalidPartNumber();
    // An empty object has no byte to range over: the whole (empty) answer.
    return { range: object.size > 0 ? { offset: 0, length: object.size } : undefined, partsCount: undefined };
  }
  const segment = object.segments[n - 1];
  if (!segment) throw S3Errors.invalidPartNumber();
  const offset = object.segments.slice(0, n - 1).reduce((total, s) => total + s.size, 0);
  return { range: { offset, length: segment.size }, partsCount: object.segments.length };
}

/** A single byte range starting at or past the end: S3's 416 (the engine serves the whole object instead). */
function unsatisfiable(header: string, size: number): boolean {
  const match = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!match) return false;
  const [, first = '', last = ''] = match;
  if (first !== '') return Number(first) >= size;
  return last !== '' && Number(last) === 0;
}

const OVERRIDES: [string, string][] = [
  ['response-content-type', 'content-type'],
  ['response-content-language', 'content-language'],
  ['response-expires', 'expires'],
  ['response-cache-control', 'cache-control'],
  ['response-content-disposition', 'content-disposition'],
  ['response-content-encoding', 'content-encoding'],
];

function responseOverrides(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [param, header] of OVERRIDES) {
    const value = query.get(param);
    if (value !== null) out[header] = value;
  }
  return out;
}

function storedChecksums(object: ObjectRecord): Record<string, string> {
  const out: Record<string, string> = {};
  if (object.checksums.sha1) out['x-amz-checksum-sha1'] = Buffer.from(object.checksums.sha1, 'hex').toString('base64');
  if (object.checksums.sha256) {
    out['x-amz-checksum-sha256'] = Buffer.from(object.checksums.sha256, 'hex').toString('base64');
  }
  return out;
}

export async function deleteObject(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  await request.storage.objects.delete(bucket, [request.key!]);
  return emptyReply(204);
}

/** DeleteObjects: up to 1000 keys; a key that cannot exist is reported in the result, the others deleted. */
export async function deleteObjects(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  const document = parseXml(await readSmallBody(request.body().stream, DELETE_BODY_LIMIT));
  if (document.name !== 'Delete') throw S3Errors.malformedXml();
  const quiet = childText(document, 'Quiet')?.trim() === 'true';
  const entries = childrenNamed(document, 'Object');
  if (entries.length === 0 || entries.length > MAX_DELETE_KEYS) throw S3Errors.malformedXml();
  const keys: string[] = [];
  const errors: { Key: string; Code: string; Message: string }[] = [];
  for (const entry of entries) {
    const key = child(entry, 'Key')?.text;
    if (key === undefined) throw S3Errors.malformedXml();
    const versionId = childText(entry, 'VersionId');
    if (versionId !== undefined && versionId !== 'null') {
      errors.push({ Key: key, Code: 'NotImplemented', Message: 'Object versioning is not offered.' });
    } else if (Buffer.byteLength(key) > 1024 || !key.isWellFormed()) {
      errors.push({ Key: key, Code: 'InvalidObjectName', Message: 'The specified object name is not valid.' });
    } else {
      try {
        request.authorize('DeleteObjects', { bucket: request.bucketName, key });
        keys.push(key);
      } catch {
        errors.push({ Key: key, Code: 'AccessDenied', Message: 'Access Denied' });
      }
    }
  }
  if (keys.length > 0) await request.storage.objects.delete(bucket, keys);
  const encode = request.query.get('encoding-type') === 'url';
  const show = (key: string) => (encode ? awsEncode(key, true) : key);
  return xmlReply(
    renderXml('DeleteResult', {
      Deleted: quiet ? undefined : keys.map((key) => ({ Key: show(key) })),
      Error: errors.map((e) => ({ ...e, Key: show(e.Key) })),
    }),
  );
}
