import { bodyStream, releaseBody, type GetResult, type ObjectRecord, type ResolvedRange } from '../../storage/index.ts';
import { xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Error, S3Errors } from '../errors.ts';
import { customMetadataFrom, httpMetadataFrom, storageClassFrom } from '../metadata.ts';
import { COPY_SOURCE_SSEC_PREFIX, ssecEcho, ssecFrom } from '../ssec.ts';
import { renderXml } from '../xml.ts';
import { conditionFrom } from './conditions.ts';
import { partNumberOf } from './multipart.ts';
import { refuseUnoffered } from './objects.ts';
import { isoNow } from '../../shared/time.ts';

/** `x-amz-copy-source`: `[/]<bucket>/<key>[?versionId=...]`, URL-encoded. */
function copySource(request: S3Request): { bucket: string; key: string } {
  const raw = String(request.req.headers['x-amz-copy-source']);
  const [path = '', version] = raw.split('?versionId=');
  if (version !== undefined && version !== 'null') throw S3Errors.notImplemented('Object versioning');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw S3Errors.invalidArgument('Invalid copy source encoding');
  }
  const trimmed = decoded.startsWith('/') ? decoded.slice(1) : decoded;
  const slash = trimmed.indexOf('/');
  if (slash <= 0 || slash === trimmed.length - 1) {
    throw S3Errors.invalidArgument('Copy Source must mention the source bucket and key: sourcebucket/sourcekey');
  }
  return { bucket: trimmed.slice(0, slash), key: trimmed.slice(slash + 1) };
}

/** Reads the copy source (in the caller's account), its x-amz-copy-source-if-* conditions applied. */
async function openSource(request: S3Request, range?: ResolvedRange): Promise<Extract<GetResult, { status: 'found' }>> {
  const source = copySource(request);
  request.authorize('GetObject', { bucket: source.bucket, key: source.key });
  const bucket = await request.storage.getBucket(request.accountId, source.bucket);
  if (!bucket) throw S3Errors.noSuchBucket();
  const result = await request.storage.objects.get(bucket, source.key, {
    onlyIf: conditionFrom(request.req.headers, 'x-amz-copy-source-'),
    range,
    ssec: ssecFrom(request.req.headers, COPY_SOURCE_SSEC_PREFIX),
  });
  if (!result) throw S3Errors.noSuchKey();
  if (result.status === 'precondition-failed') throw S3Errors.preconditionFailed();
  return result;
}

/**
 * CopyObject: the metadata directive COPY (default), REPLACE, or R2's MERGE (the request's metadata over
 * the source's); copy-source conditionals; R2's cf-copy-destination-if-* on the destination.
 */
export async function copyObject(request: S3Request): Promise<S3Reply> {
  refuseUnoffered(request);
  const headers = request.req.headers;
  const directive = String(headers['x-amz-metadata-directive'] ?? 'COPY').toUpperCase();
  if (directive !== 'COPY' && directive !== 'REPLACE' && directive !== 'MERGE') {
    throw S3Errors.invalidArgument('Unknown metadata directive.');
  }
  const ssec = ssecFrom(headers);
  const destination = await request.bucket();
  const storageClass = storageClassFrom(headers['x-amz-storage-class']);
  const source = await openSource(request);
  const sourceObject = source.object;
  const sameKey = sourceObject.bucketId === destination.id && sourceObject.key === request.key;
  // A new key (or none, for an encrypted source) changes the encryption attributes: a legal self-copy.
  const sameEncryption = ssec === undefined && sourceObject.ssec === undefined;
  if (sameKey && directive === 'COPY' && storageClass === undefined && sameEncryption) {
    void releaseBody(source.body);
    throw S3Errors.invalidRequest(
      "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
    );
  }
  const { httpMetadata, customMetadata } = metadataFor(directive, sourceObject, request);
  let copied: ObjectRecord | null;
  try {
    copied = await request.storage.objects.put(destination, request.key!, bodyStream(source.body), {
      size: sourceObject.size,
      httpMetadata,
      customMetadata,
      onlyIf: conditionFrom(headers, 'cf-copy-destination-'),
      storageClass,
      ssec,
    });
  } finally {
    void releaseBody(source.body);
  }
  if (!copied) throw S3Errors.preconditionFailed();
  return xmlReply(
    renderXml('CopyObjectResult', {
      LastModified: new Date(copied.uploaded).toISOString(),
      ETag: `"${copied.etag}"`,
    }),
    200,
    ssecEcho(copied.ssec),
  );
}

function metadataFor(directive: string, source: ObjectRecord, request: S3Request) {
  if (directive === 'COPY') return { httpMetadata: source.httpMetadata, customMetadata: source.customMetadata };
  const httpMetadata = httpMetadataFrom(request.req.headers);
  const customMetadata = customMetadataFrom(request.req.rawHeaders);
  if (directive === 'REPLACE') return { httpMetadata, customMetadata };
  return {
    httpMetadata: { ...source.httpMetadata, ...httpMetadata },
    customMetadata: { ...source.customMetadata, ...customMetadata },
  };
}

/** UploadPartCopy: a part from (a byte range of) an existing object. */
export async function uploadPartCopy(request: S3Request, uploadId: string): Promise<S3Reply> {
  const partNumber = partNumberOf(request);
  const ssec = ssecFrom(request.req.headers);
  const bucket = await request.bucket();
  const rangeHeader = request.req.headers['x-amz-copy-source-range'];
  let range: ResolvedRange | undefined;
  if (rangeHeader !== undefined) {
    const match = /^bytes=(\d+)-(\d+)$/.exec(String(rangeHeader).trim());
    if (!match || Number(match[2]) < Number(match[1])) {
      throw S3Errors.invalidArgument(
        'The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy',
      );
    }
    range = { offset: Number(match[1]), length: Number(match[2]) - Number(match[1]) + 1 };
  }
  const source = await openSource(request, range);
  if (range && range.offset + range.length > source.object.size) {
    void releaseBody(source.body);
    throw new S3Error(400, 'InvalidRange', 'The requested range is not satisfiable');
  }
  const length = source.range ? source.range.length : source.object.size;
  try {
    const part = await request.storage.multipart.uploadPart(
      bucket,
      request.key!,
      uploadId,
      partNumber,
      bodyStream(source.body),
      length,
      ssec,
    );
    return xmlReply(
      renderXml('CopyPartResult', { LastModified: isoNow(request.clock), ETag: `"${part.md5}"` }),
      200,
      ssecEcho(ssec),
    );
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 10001) {
      throw new S3Error(404, 'NoSuchUpload', 'The specified multipart upload does not exist.');
    }
    throw error;
  } finally {
    void releaseBody(source.body);
  }
}
