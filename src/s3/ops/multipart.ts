import { createHash } from 'node:crypto';
import { LedgeError } from '../../shared/errors.ts';
import type { BucketRecord, ObjectRecord, UploadRecord } from '../../storage/index.ts';
import { emptyReply, xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Error, S3Errors } from '../errors.ts';
import { customMetadataFrom, httpMetadataFrom, s3StorageClass, storageClassFrom } from '../metadata.ts';
import { awsEncode } from '../sigv4.ts';
import { ssecEcho, ssecFrom } from '../ssec.ts';
import { child, childrenNamed, parseXml, readSmallBody, renderXml } from '../xml.ts';
import { owner } from './buckets.ts';
import { checksumEcho, refuseUnoffered } from './objects.ts';

const COMPLETE_BODY_LIMIT = 4 * 1024 * 1024;
/** The engine's NoSuchUpload (R2's v4 code). */
const NO_SUCH_UPLOAD = 10024;
const MAX_PART_NUMBER = 10_000;

/**
 * The engine answers an upload id the key never had with R2's internal-error code (a v4 detail); S3 clients
 * expect NoSuchUpload for it.
 */
async function asUploadError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof LedgeError && error.code === 10001 && error.status === 404) {
      throw new LedgeError(404, 10024, 'The specified multipart upload does not exist.');
    }
    throw error;
  }
}

export async function createUpload(request: S3Request): Promise<S3Reply> {
  refuseUnoffered(request);
  const headers = request.req.headers;
  const bucket = await request.bucket();
  const upload = await request.storage.multipart.create(bucket, request.key!, {
    httpMetadata: httpMetadataFrom(headers),
    customMetadata: customMetadataFrom(request.req.rawHeaders),
    storageClass: storageClassFrom(headers['x-amz-storage-class']),
    ssec: ssecFrom(headers),
  });
  const algorithm = headers['x-amz-checksum-algorithm'];
  return xmlReply(
    renderXml('InitiateMultipartUploadResult', { Bucket: bucket.name, Key: upload.key, UploadId: upload.uploadId }),
    200,
    { ...(typeof algorithm === 'string' ? { 'x-amz-checksum-algorithm': algorithm } : {}), ...ssecEcho(upload.ssec) },
  );
}

export function partNumberOf(request: S3Request): number {
  const raw = request.query.get('partNumber') ?? '';
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PART_NUMBER) {
    throw S3Errors.invalidArgument(`Part number must be an integer between 1 and ${MAX_PART_NUMBER}, inclusive`);
  }
  return Number(raw);
}

export async function uploadPart(request: S3Request, uploadId: string): Promise<S3Reply> {
  const partNumber = partNumberOf(request);
  const ssec = ssecFrom(request.req.headers);
  const bucket = await request.bucket();
  const body = request.body();
  const part = await asUploadError(() =>
    request.storage.multipart.uploadPart(bucket, request.key!, uploadId, partNumber, body.stream, body.size, ssec),
  );
  // S3 shows a part's ETag as the MD5 of its bytes, and S3 clients (s3cmd) check it against their own; the
  // binding's part etag is random per upload, as R2's. CompleteMultipartUpload takes either.
  return emptyReply(200, { etag: `"${part.md5}"`, ...checksumEcho(body.checksum), ...ssecEcho(ssec) });
}

/** CompleteMultipartUpload: the parts as listed; R2's rules (equal part sizes, etags) are the engine's. */
export async function completeUpload(request: S3Request, uploadId: string): Promise<S3Reply> {
  const bucket = await request.bucket();
  const document = parseXml(await readSmallBody(request.body().stream, COMPLETE_BODY_LIMIT));
  if (document.name !== 'CompleteMultipartUpload') throw S3Errors.malformedXml();
  const parts = childrenNamed(document, 'Part').map((part) => {
    const number = child(part, 'PartNumber')?.text.trim() ?? '';
    const etag = child(part, 'ETag')?.text.trim();
    if (!/^\d+$/.test(number) || etag === undefined) throw S3Errors.malformedXml();
    return { partNumber: Number(number), etag: etag.replace(/^"(.*)"$/, '$1') };
  });
  for (let i = 1; i < parts.length; i++) {
    if (parts[i]!.partNumber <= parts[i - 1]!.partNumber) {
      throw new S3Error(
        400,
        'InvalidPartOrder',
        'The list of parts was not in ascending order. Parts must be ordered by part number.',
      );
    }
  }
  let object: ObjectRecord;
  try {
    const stored = new Map(
      (await asUploadError(() => request.storage.multipart.listParts(bucket, request.key!, uploadId))).map((p) => [
        p.partNumber,
        p,
      ]),
    );
    // An ETag this door gave (the part's MD5) names the part the engine knows by its own etag.
    const named = parts.map((p) => {
      const part = stored.get(p.partNumber);
      return part && p.etag === part.md5 ? { ...p, etag: part.etag } : p;
    });
    object = await asUploadError(() => request.storage.multipart.complete(bucket, request.key!, uploadId, named));
  } catch (error) {
    const done = await repeatedCompletion(request, bucket, uploadId, parts, error);
    if (!done) throw error;
    object = done;
  }
  return xmlReply(
    renderXml('CompleteMultipartUploadResult', {
      Location: `/${bucket.name}/${awsEncode(object.key, true)}`,
      Bucket: bucket.name,
      Key: object.key,
      ETag: `"${object.etag}"`,
    }),
    200,
    ssecEcho(object.ssec),
  );
}

/**
 * S3 answers a CompleteMultipartUpload repeated on an upload it already completed (a client retrying after
 * a lost answer) with the same result, where R2's binding says NoSuchUpload. Here: when the upload's object
 * is still the key's current one and the listed parts (the ETags this door gave) make its ETag; otherwise
 * NoSuchUpload stands (the upload may have been aborted, or its object replaced since).
 */
async function repeatedCompletion(
  request: S3Request,
  bucket: BucketRecord,
  uploadId: string,
  parts: { partNumber: number; etag: string }[],
  error: unknown,
): Promise<ObjectRecord | undefined> {
  if (!(error instanceof LedgeError) || error.code !== NO_SUCH_UPLOAD) return undefined;
  const object = await request.storage.multipart.completedObject(bucket, request.key!, uploadId);
  if (!object || !parts.every((p) => /^[0-9a-f]{32}$/.test(p.etag))) return undefined;
  const md5s = Buffer.concat(parts.map((p) => Buffer.from(p.etag, 'hex')));
  const etag = `${createHash('md5').update(md5s).digest('hex')}-${parts.length}`;
  return etag === object.etag ? object : undefined;
}

export async function abortUpload(request: S3Request, uploadId: string): Promise<S3Reply> {
  const bucket = await request.bucket();
  await asUploadError(() => request.storage.multipart.abort(bucket, request.key!, uploadId));
  return emptyReply(204);
}

function boundedInteger(raw: string | null, name: string, fallback: number, max: number): number {
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw S3Errors.invalidArgument(`${name} must be a non-negative integer`);
  return Math.min(Number(raw), max);
}

/** ListParts: max-parts, part-number-marker. */
export async function listParts(request: S3Request, uploadId: string): Promise<S3Reply> {
  const bucket = await request.bucket();
  const maxParts = boundedInteger(request.query.get('max-parts'), 'max-parts', 1000, 1000);
  const marker = boundedInteger(request.query.get('part-number-marker'), 'part-number-marker', 0, MAX_PART_NUMBER);
  const all = await asUploadError(() => request.storage.multipart.listParts(bucket, request.key!, uploadId));
  const after = all.filter((p) => p.partNumber > marker);
  const page = after.slice(0, maxParts);
  const truncated = after.length > page.length;
  return xmlReply(
    renderXml('ListPartsResult', {
      Bucket: bucket.name,
      Key: request.key!,
      UploadId: uploadId,
      PartNumberMarker: marker,
      NextPartNumberMarker: page.at(-1)?.partNumber ?? marker,
      MaxParts: maxParts,
      IsTruncated: truncated,
      Part: page.map((p) => ({
        PartNumber: p.partNumber,
        LastModified: new Date(p.uploadedAt).toISOString(),
        ETag: `"${p.md5}"`,
        Size: p.size,
      })),
      Initiator: owner(request.accountId),
      Owner: owner(request.accountId),
      StorageClass: 'STANDARD',
    }),
  );
}

/** ListMultipartUploads: prefix, delimiter, key-marker, upload-id-marker, max-uploads, encoding-type. */
export async function listUploads(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  const query = request.query;
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') || undefined;
  const maxUploads = boundedInteger(query.get('max-uploads'), 'max-uploads', 1000, 1000);
  const keyMarker = query.get('key-marker') ?? '';
  const uploadIdMarker = query.get('upload-id-marker') ?? '';
  const encode = query.get('encoding-type') === 'url';
  const show = (text: string) => (encode ? awsEncode(text, true) : text);

  // Without an upload-id-marker, S3 resumes after every upload of key-marker.
  let after: { key: string; uploadId: string } | undefined =
    keyMarker === '' ? undefined : { key: keyMarker, uploadId: uploadIdMarker === '' ? '\u{10FFFF}' : uploadIdMarker };
  const uploads: UploadRecord[] = [];
  const prefixes: string[] = [];
  let truncated = false;
  scan: while (maxUploads > 0) {
    const batch = await request.storage.multipart.listUploads(bucket, { prefix, after, limit: 1000 });
    for (const upload of batch) {
      const cut = delimiter ? upload.key.indexOf(delimiter, prefix.length) : -1;
      const folded = cut === -1 ? undefined : upload.key.slice(0, cut + delimiter!.length);
      if (folded !== undefined && prefixes.at(-1) === folded) {
        after = { key: upload.key, uploadId: upload.uploadId };
        continue;
      }
      if (uploads.length + prefixes.length === maxUploads) {
        truncated = true;
        break scan;
      }
      if (folded !== undefined) prefixes.push(folded);
      else uploads.push(upload);
      after = { key: upload.key, uploadId: upload.uploadId };
    }
    if (batch.length < 1000) break;
  }
  const lastUpload = uploads.at(-1);
  return xmlReply(
    renderXml('ListMultipartUploadsResult', {
      Bucket: bucket.name,
      KeyMarker: show(keyMarker),
      UploadIdMarker: uploadIdMarker,
      NextKeyMarker: truncated && after ? show(after.key) : undefined,
      NextUploadIdMarker: truncated && lastUpload ? lastUpload.uploadId : undefined,
      Prefix: show(prefix),
      Delimiter: delimiter === undefined ? undefined : show(delimiter),
      MaxUploads: maxUploads,
      EncodingType: encode ? 'url' : undefined,
      IsTruncated: truncated,
      Upload: uploads.map((u) => ({
        Key: show(u.key),
        UploadId: u.uploadId,
        Initiator: owner(request.accountId),
        Owner: owner(request.accountId),
        StorageClass: s3StorageClass(u.storageClass),
        Initiated: new Date(u.createdAt).toISOString(),
      })),
      CommonPrefixes: prefixes.map((p) => ({ Prefix: show(p) })),
    }),
  );
}
