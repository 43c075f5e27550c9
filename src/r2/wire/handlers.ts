import type { Readable } from 'node:stream';
import {
  R2Errors,
  type BucketRecord,
  type ObjectRecord,
  type OpenBlobFile,
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

/** What a binding call answers: JSON metadata, optionally followed by the object's bytes. */
export interface WireReply {
  status: number;
  json: unknown;
  /**
   * Small bodies come as one buffer (sent with the JSON in one write), larger ones within one blob as its
   * open file (sent through reused buffers, see send-file.ts), the rest as a stream.
   */
  body?: { data: Readable | Buffer | OpenBlobFile; length: number } | undefined;
  /** The bytes the runtime reads from the blob file itself, when it does (counted as served). */
  localBytes?: number;
}

/**
 * Bodies up to this size are read into one buffer instead of streamed: for small objects the
 * per-request stream machinery costs more than the read (bench/functions GET 1 KiB: backend CPU per
 * request halved). Not much larger: a 1 MiB body read whole measured slower than streamed, since
 * nothing is sent before the last byte is read.
 */
const BUFFERED_BODY_LIMIT = 64 * 1024;

export interface WireOptions {
  /**
   * Set for gets through the runtime's local-read binding, which reads large bodies from the bucket's
   * blob directory itself: the custom metadata key that tells it which file (see R2WireBackend.localReads).
   */
  localBodyKey?: string | undefined;
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
      const object = await storage.objects.head(bucket, request.object);
      if (!object) throw R2Errors.noSuchKey();
      return { status: 200, json: wireObject(object, { range: wholeObject(object) }) };
    }
    case 'get': {
      const result = await storage.objects.read(bucket, request.object, {
        range: toRange(request),
        onlyIf: toConditional(request.onlyIf),
        bufferUpTo: BUFFERED_BODY_LIMIT,
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
      if ('localFile' in result.body) {
        // No bytes: the isolate reads them from the file itself (see local-body-shim.ts), told where by
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
      return {
        status: 200,
        json: wireObject(result.object, { range }),
        body: { data: result.body, length: range.length },
      };
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
