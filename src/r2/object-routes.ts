import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { limitedBody } from '../api-kit/body.ts';
import type { AppEnv, ApiContext } from '../api-kit/context.ts';
import { ok } from '../api-kit/respond.ts';
import { LedgeError } from '../shared/errors.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import {
  bodyStream,
  conditionalFromHeaders,
  conditionHolds,
  R2_LIMITS,
  R2Errors,
  releaseBody,
  STORAGE_CLASSES,
  type HttpMetadata,
  type ObjectRecord,
  type StorageClass,
  type StorageService,
} from '../storage/index.ts';
import { renderObjectInfo, renderUploadedObject } from './render.ts';

const OBJECT_PATH = '/accounts/:account_id/r2/buckets/:bucket_name/objects/:key{.+}';
const CUSTOM_PREFIX = 'x-amz-meta-';

/**
 * `/accounts/{a}/r2/buckets/{b}/objects[/{key}]`: the object API wrangler's `r2 object` commands use.
 * Bodies stream both ways; HTTP metadata travels as the usual headers, custom metadata as x-amz-meta-*.
 */
export function objectRoutes(storage: StorageService, metrics?: LedgeMetrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const bucketOf = (c: ApiContext) => storage.buckets.require(c.req.param('account_id')!, c.req.param('bucket_name')!);

  app.put(OBJECT_PATH, async (c) => {
    const bucket = await bucketOf(c);
    const length = c.req.header('content-length');
    const storageClass = c.req.header('cf-r2-storage-class');
    if (storageClass !== undefined && !(STORAGE_CLASSES as readonly string[]).includes(storageClass)) {
      throw new LedgeError(400, 10040, `cf-r2-storage-class must be one of ${STORAGE_CLASSES.join(', ')}`);
    }
    // Streams to disk as it arrives; capped at the single-put limit, and failing if the client leaves.
    const body = (limitedBody(c, R2_LIMITS.maxSinglePutBytes, R2Errors.entityTooLarge) ??
      Readable.from([])) as AsyncIterable<Uint8Array>;
    const object = await storage.objects.put(bucket, c.req.param('key'), body, {
      size: length === undefined ? undefined : Number(length),
      httpMetadata: httpMetadataFrom(c),
      customMetadata: customMetadataFrom(c),
      digests: md5From(c.req.header('content-md5')),
      onlyIf: conditionalFromHeaders(conditionalHeaders(c)),
      storageClass: storageClass as StorageClass | undefined,
    });
    if (!object) throw R2Errors.preconditionFailed();
    metrics?.r2('put', 'api', object.size);
    return ok(c, renderUploadedObject(object));
  });

  app.get(OBJECT_PATH, async (c) => {
    const bucket = await bucketOf(c);
    const headers = conditionalHeaders(c);
    const rangeHeader = c.req.header('range');
    const result = await storage.objects.get(bucket, c.req.param('key'), {
      onlyIf: conditionalFromHeaders(headers),
      range: rangeHeader ? { header: rangeHeader } : undefined,
    });
    if (!result) throw R2Errors.noSuchKey();
    if (result.status === 'precondition-failed') {
      // RFC 7232: a failed If-Match / If-Unmodified-Since is 412; otherwise the client's copy is current.
      const strict = conditionalFromHeaders({ ifMatch: headers.ifMatch, ifUnmodifiedSince: headers.ifUnmodifiedSince });
      if (!conditionHolds(strict, result.object)) throw R2Errors.preconditionFailed();
      return new Response(null, { status: 304, headers: objectHeaders(result.object) });
    }
    const responseHeaders = objectHeaders(result.object);
    if (c.req.method === 'HEAD') {
      // Hono answers HEAD with this GET handler: release the opened blob instead of leaving it to GC.
      void releaseBody(result.body);
      metrics?.r2('head', 'api');
      responseHeaders.set('content-length', String(result.object.size));
      return new Response(null, { status: 200, headers: responseHeaders });
    }
    const length = result.range ? result.range.length : result.object.size;
    metrics?.r2('get', 'api', 0, length);
    responseHeaders.set('content-length', String(length));
    if (result.range) {
      const { offset } = result.range;
      responseHeaders.set('content-range', `bytes ${offset}-${offset + length - 1}/${result.object.size}`);
    }
    const body = Readable.toWeb(bodyStream(result.body)) as ReadableStream<Uint8Array>;
    return new Response(body, { status: result.range ? 206 : 200, headers: responseHeaders });
  });

  app.delete(OBJECT_PATH, async (c) => {
    const bucket = await bucketOf(c);
    await storage.objects.delete(bucket, [c.req.param('key')]);
    metrics?.r2('delete', 'api');
    return ok(c, {});
  });

  app.get('/accounts/:account_id/r2/buckets/:bucket_name/objects', async (c) => {
    const bucket = await bucketOf(c);
    const query = c.req.query();
    const rawLimit = query['per_page'] ?? query['limit'];
    if (rawLimit !== undefined && !/^\d+$/.test(rawLimit)) throw R2Errors.invalidMaxKeys();
    metrics?.r2('list', 'api');
    const result = await storage.list(bucket, {
      prefix: query['prefix'],
      delimiter: query['delimiter'],
      cursor: query['cursor'] || undefined,
      startAfter: query['start_after'],
      limit: rawLimit === undefined ? undefined : Number(rawLimit),
    });
    return ok(c, result.objects.map(renderObjectInfo), {
      resultInfo: {
        is_truncated: result.truncated,
        delimited: result.delimitedPrefixes,
        ...(result.cursor ? { cursor: result.cursor } : {}),
      },
    });
  });

  return app;
}

function conditionalHeaders(c: ApiContext) {
  return {
    ifMatch: c.req.header('if-match'),
    ifNoneMatch: c.req.header('if-none-match'),
    ifModifiedSince: c.req.header('if-modified-since'),
    ifUnmodifiedSince: c.req.header('if-unmodified-since'),
  };
}

function httpMetadataFrom(c: ApiContext): HttpMetadata {
  const metadata: HttpMetadata = {};
  const set = (field: Exclude<keyof HttpMetadata, 'cacheExpiry'>, header: string) => {
    const value = c.req.header(header);
    if (value) metadata[field] = value;
  };
  set('contentType', 'content-type');
  set('contentLanguage', 'content-language');
  set('contentDisposition', 'content-disposition');
  set('contentEncoding', 'content-encoding');
  set('cacheControl', 'cache-control');
  const expires = c.req.header('expires');
  if (expires && !Number.isNaN(Date.parse(expires))) metadata.cacheExpiry = Date.parse(expires);
  return metadata;
}

function customMetadataFrom(c: ApiContext): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of c.req.raw.headers) {
    if (name.startsWith(CUSTOM_PREFIX)) metadata[name.slice(CUSTOM_PREFIX.length)] = value;
  }
  return metadata;
}

function md5From(header: string | undefined): { md5: string } | undefined {
  if (!header) return undefined;
  const bytes = Buffer.from(header, 'base64');
  if (bytes.length !== 16) throw R2Errors.invalidDigest('md5');
  return { md5: bytes.toString('hex') };
}

function objectHeaders(object: ObjectRecord): Headers {
  const headers = new Headers({
    etag: `"${object.etag}"`,
    'last-modified': new Date(object.uploaded).toUTCString(),
    'accept-ranges': 'bytes',
  });
  const http = object.httpMetadata;
  headers.set('content-type', http.contentType ?? 'application/octet-stream');
  if (http.contentLanguage) headers.set('content-language', http.contentLanguage);
  if (http.contentDisposition) headers.set('content-disposition', http.contentDisposition);
  if (http.contentEncoding) headers.set('content-encoding', http.contentEncoding);
  if (http.cacheControl) headers.set('cache-control', http.cacheControl);
  if (http.cacheExpiry !== undefined) headers.set('expires', new Date(http.cacheExpiry).toUTCString());
  for (const [name, value] of Object.entries(object.customMetadata)) headers.set(`${CUSTOM_PREFIX}${name}`, value);
  return headers;
}
