import {
  CACHEABLE_METADATA_KEY,
  type ObjectChanges,
  R2Errors,
  type BodySource,
  type BucketRecord,
  type ObjectRecord,
  type ResolvedRange,
  type StorageClass,
  type StorageService,
  STORAGE_CLASSES,
} from '../../storage/index.ts';
import {
  toConditional,
  toCustomMetadata,
  toDigests,
  toHttpMetadata,
  toRange,
  toSsec,
  type WireRequest,
} from './protocol.ts';
import { wireObject } from './wire-object.ts';
import { SMALL_BODY_BYTES } from '../../shared/http-listener/small-body.ts';

/** What a binding call answers: JSON metadata, optionally followed by the object's bytes. */
export interface WireReply {
  status: number;
  json: unknown;
  /**
   * Small bodies come as bytes (sent with the JSON in one write), larger ones within one blob as its open
   * file (sent through reused buffers, see send-file.ts), the rest as a stream (send-body.ts).
   */
  body?: { data: BodySource; length: number } | undefined;
  /** The bytes the runtime reads from the blob file itself, when it does (counted as served). */
  localBytes?: number;
}

export interface WireOptions {
  /**
   * Set for gets through the runtime's local-read binding, which reads large bodies from the bucket's
   * blob directory itself: the custom metadata key that tells it which file (see R2WireBackend.localReads).
   */
  localBodyKey?: string | undefined;
  /**
   * Set for the runtime's local-read binding when this process is the store's only writer: plain heads
   * and whole-object gets of small objects are marked cacheable (one more custom metadata entry under
   * CACHEABLE_METADATA_KEY, which the runtime removes), after the key is watched, so that any later write
   * waits until the runtime has dropped its copy (storage/object-changes.ts, isolate/r2-cache.ts). Every
   * listing through that binding may be kept too: the bucket's listings are watched before it is read.
   */
  cache?: ObjectChanges | undefined;
}

const INCLUDE_HTTP = 0;
const INCLUDE_CUSTOM = 1;

/**
 * Executes one binding call against the engine. Failures are thrown as LedgeErrors (the backend turns
 * them into `cf-r2-error`); a missing key and a failed get precondition are answered here because the
 * runtime needs them in a particular shape.
 */
export async function handleWireRequest(
  storage: StorageService,
  bucket: BucketRecord,
  request: WireRequest,
  value: AsyncIterable<Uint8Array>,
  valueSize: number,
  options: WireOptions = {},
): Promise<WireReply> {
  switch (request.method) {
    case 'head': {
      // Watched before the read: a write that commits after it finds the key watched (object-changes.ts).
      options.cache?.watch(bucket, request.object);
      const object = await storage.objects.head(bucket, request.object);
      if (!object) throw R2Errors.noSuchKey();
      const json = wireObject(object, { range: wholeObject(object) });
      if (options.cache) markCacheable(json);
      return { status: 200, json };
    }
    case 'get': {
      const cacheable = options.cache !== undefined && isWholeObjectGet(request);
      if (cacheable) options.cache!.watch(bucket, request.object);
      const result = await storage.objects.read(bucket, request.object, {
        range: toRange(request),
        onlyIf: toConditional(request.onlyIf),
        bufferUpTo: SMALL_BODY_BYTES,
        files: true,
        local: options.localBodyKey !== undefined,
        ssec: toSsec(request),
      });
      if (!result) throw R2Errors.noSuchKey();
      if (result.status === 'precondition-failed') {
        return { status: 412, json: wireObject(result.object, { range: wholeObject(result.object) }) };
      }
      // R2 reports the range served on every read, the whole object when none (or an unusable header) was asked.
      const range = result.range ?? wholeObject(result.object);
      if (result.body.kind === 'local') {
        // No bytes: the isolate reads them from the file itself (see isolate/local-body.ts), told where by
        // one more custom metadata entry under the reserved key (no stored object has one: see
        // wireObject), which the shim removes before the function sees the object. The file is always one
        // of this bucket's (ObjectService.read), relative to the bucket's directory.
        const json = wireObject(result.object, { range });
        (json['customFields'] as { k: string; v: string }[]).push({
          k: options.localBodyKey!,
          v: result.body.localFile.path,
        });
        return { status: 200, json, localBytes: range.length };
      }
      const json = wireObject(result.object, { range });
      // A small whole object, sent in one buffer: the runtime may keep it (body and metadata) until told.
      if (cacheable && result.body.kind === 'bytes' && result.body.bytes.length === result.object.size)
        markCacheable(json);
      return { status: 200, json, body: { data: result.body, length: range.length } };
    }
    case 'put': {
      const object = await storage.objects.put(bucket, request.object, value, {
        size: valueSize,
        httpMetadata: toHttpMetadata(request.httpFields),
        customMetadata: toCustomMetadata(request.customFields),
        digests: toDigests(request),
        onlyIf: toConditional(request.onlyIf),
        storageClass: storageClass(request.storageClass),
        ssec: toSsec(request),
      });
      if (!object) throw R2Errors.preconditionFailed();
      return { status: 200, json: wireObject(object) };
    }
    case 'list': {
      // Runtimes that predate `newRuntime` expect both kinds of metadata whatever `include` says.
      const include = request.newRuntime ? new Set(request.include ?? []) : new Set([INCLUDE_HTTP, INCLUDE_CUSTOM]);
      // Through the runtime's hidden binding a listing may be kept by the isolate (isolate/r2-cache.ts): watched
      // before the read, so the bucket's next write waits until every isolate dropped its listings of it.
      options.cache?.watchLists(bucket);
      const result = await storage.list(bucket, {
        prefix: request.prefix,
        delimiter: request.delimiter,
        cursor: request.cursor,
        startAfter: request.startAfter,
        limit: request.limit,
      });
      const objects = result.objects.map((o) =>
        wireObject(o, { http: include.has(INCLUDE_HTTP), custom: include.has(INCLUDE_CUSTOM) }),
      );
      const json: Record<string, unknown> = {
        objects,
        truncated: result.truncated,
        delimitedPrefixes: result.delimitedPrefixes,
      };
      if (result.cursor) json['cursor'] = result.cursor;
      return { status: 200, json };
    }
    case 'delete': {
      const keys = request.objects ?? (request.object !== undefined ? [request.object] : []);
      await storage.objects.delete(bucket, keys);
      return { status: 200, json: {} };
    }
    case 'createMultipartUpload': {
      const upload = await storage.multipart.create(bucket, request.object, {
        httpMetadata: toHttpMetadata(request.httpFields),
        customMetadata: toCustomMetadata(request.customFields),
        storageClass: storageClass(request.storageClass),
        ssec: toSsec(request),
      });
      return { status: 200, json: { uploadId: upload.uploadId } };
    }
    case 'uploadPart': {
      const part = await storage.multipart.uploadPart(
        bucket,
        request.object,
        request.uploadId,
        request.partNumber,
        value,
        valueSize,
        toSsec(request),
      );
      return { status: 200, json: { etag: part.etag } };
    }
    case 'completeMultipartUpload': {
      const parts = request.parts.map((p) => ({ partNumber: p.part, etag: p.etag }));
      const object = await storage.multipart.complete(bucket, request.object, request.uploadId, parts);
      return { status: 200, json: wireObject(object) };
    }
    case 'abortMultipartUpload': {
      await storage.multipart.abort(bucket, request.object, request.uploadId);
      return { status: 200, json: {} };
    }
  }
}

function isWholeObjectGet(request: Extract<WireRequest, { method: 'get' }>): boolean {
  return request.range === undefined && request.rangeHeader === undefined && request.onlyIf === undefined;
}

function markCacheable(json: Record<string, unknown>): void {
  (json['customFields'] as { k: string; v: string }[]).push({ k: CACHEABLE_METADATA_KEY, v: '1' });
}

function wholeObject(object: ObjectRecord): ResolvedRange {
  return { offset: 0, length: object.size };
}

function storageClass(value: string | undefined): StorageClass | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(STORAGE_CLASSES as readonly string[]).includes(value)) {
    throw R2Errors.invalidArgument(
      `The storage class "${value}" is not valid; use one of ${STORAGE_CLASSES.join(', ')}.`,
    );
  }
  return value as StorageClass;
}
