import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { LedgeError } from '../../shared/errors.ts';
import { hostnameOf } from '../../shared/hostname.ts';
import type { Logger } from '../../shared/logger.ts';
import {
  bodyStream,
  conditionalFromHeaders,
  conditionHolds,
  corsActual,
  corsPreflight,
  releaseBody,
  type BucketRecord,
  type ObjectRecord,
  type StorageService,
} from '../../storage/index.ts';
import type { PublicHostDirectory } from './host-directory.ts';
import { sendPage } from './pages.ts';

const ALLOW = 'GET, HEAD, OPTIONS';
const SINGLE_RANGE = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i;

/** What the traffic listener's host hook needs (load-balancing's HostHandler, structurally). */
export interface PublicBucketHandler {
  claims(hostname: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * Serves public buckets read-only over plain HTTP by Host (their managed URL or a custom domain), on the
 * traffic port: GET and HEAD of `/<key>` with single ranges, conditionals (If-Match, If-None-Match,
 * If-Modified-Since, If-Unmodified-Since, If-Range) and the object's caching headers (ETag, Last-Modified,
 * Cache-Control, Expires), the bucket's CORS rules (preflights too), an HTML 404 for a missing object and
 * a 401 for any write. No listing, no index documents, no custom metadata (as R2's public buckets).
 */
export function publicBucketHandler(deps: {
  directory: PublicHostDirectory;
  storage: StorageService;
  logger?: Logger | undefined;
}): PublicBucketHandler {
  return {
    claims: (hostname) => deps.directory.claims(hostname),
    handle: (req, res) => {
      const method = req.method ?? 'GET';
      serve(deps, req, res, method).catch((error: unknown) => {
        const status = error instanceof LedgeError ? error.status : 500;
        if (status >= 500) deps.logger?.error('public bucket request failed', { host: req.headers.host, err: error });
        if (res.headersSent) return void res.destroy();
        sendPage(res, status === 400 ? 400 : status === 404 ? 404 : 500, method);
      });
    },
  };
}

type Deps = Parameters<typeof publicBucketHandler>[0];

async function serve(deps: Deps, req: IncomingMessage, res: ServerResponse, method: string): Promise<void> {
  const host = deps.directory.lookup(hostnameOf(req.headers.host));
  const bucket = host && (await deps.storage.buckets.get(host.accountId, host.bucketName));
  // A bucket deleted (or made again under its name) since the directory loaded serves nothing.
  if (!host || !bucket || bucket.id !== host.bucketId) return sendPage(res, 404, method, closeIfBody(req));
  const origin = single(req.headers.origin);
  if (method === 'OPTIONS') return preflight(deps, req, res, bucket, origin);
  if (method !== 'GET' && method !== 'HEAD') {
    return sendPage(res, 401, method, { allow: ALLOW, ...closeIfBody(req) });
  }
  const cors = origin === undefined ? {} : corsActual(await deps.storage.cors.rulesOf(bucket), { origin, method });
  const key = keyOf(req.url);
  if (key === undefined) return sendPage(res, 400, method, cors);
  if (key === '') return sendPage(res, 404, method, cors);
  const conditionHeaders = {
    ifMatch: single(req.headers['if-match']),
    ifNoneMatch: single(req.headers['if-none-match']),
    ifModifiedSince: single(req.headers['if-modified-since']),
    ifUnmodifiedSince: single(req.headers['if-unmodified-since']),
  };
  const onlyIf = conditionalFromHeaders(conditionHeaders);

  if (method === 'HEAD') {
    const object = await deps.storage.objects.head(bucket, key);
    if (!object) return sendPage(res, 404, method, cors);
    // An SSE-C object cannot be served without its key, which a public URL has no way to send: as its GET.
    if (object.ssec) return sendPage(res, 400, method, cors);
    if (!conditionHolds(onlyIf, object)) return notModifiedOrFailed(res, method, object, conditionHeaders, cors);
    res.writeHead(200, { ...objectHeaders(object), 'content-length': String(object.size), ...cors });
    return void res.end();
  }

  let rangeHeader = single(req.headers.range);
  const ifRange = single(req.headers['if-range']);
  if (rangeHeader !== undefined && ifRange !== undefined) {
    // If-Range: the range only while the client's copy is current, else the whole (new) object.
    const current = await deps.storage.objects.head(bucket, key);
    if (!current || !ifRangeHolds(ifRange, current)) rangeHeader = undefined;
  }
  const result = await deps.storage.objects.get(bucket, key, {
    onlyIf,
    range: rangeHeader === undefined ? undefined : { header: rangeHeader },
  });
  if (!result) return sendPage(res, 404, method, cors);
  if (result.status === 'precondition-failed') {
    return notModifiedOrFailed(res, method, result.object, conditionHeaders, cors);
  }
  const { object, range, body } = result;
  if (rangeHeader !== undefined && range === undefined && unsatisfiable(rangeHeader, object.size)) {
    void releaseBody(body);
    return sendPage(res, 416, method, { ...cors, 'content-range': `bytes */${object.size}` });
  }
  const headers: Record<string, string> = { ...objectHeaders(object), ...cors };
  headers['content-length'] = String(range ? range.length : object.size);
  if (range) headers['content-range'] = `bytes ${range.offset}-${range.offset + range.length - 1}/${object.size}`;
  res.writeHead(range ? 206 : 200, headers);
  pipeline(bodyStream(body), res, (error) => {
    if (error && error.code !== 'ERR_STREAM_PREMATURE_CLOSE')
      deps.logger?.warn('public bucket body stopped', { host: req.headers.host, err: error });
  });
}

async function preflight(
  deps: Deps,
  req: IncomingMessage,
  res: ServerResponse,
  bucket: BucketRecord,
  origin: string | undefined,
): Promise<void> {
  const requestMethod = single(req.headers['access-control-request-method']);
  if (origin === undefined || requestMethod === undefined) {
    res.writeHead(204, { allow: ALLOW });
    return void res.end();
  }
  const answer = corsPreflight(await deps.storage.cors.rulesOf(bucket), {
    origin,
    method: requestMethod,
    requestHeaders: single(req.headers['access-control-request-headers']),
  });
  if (!answer.allowed) return sendPage(res, 403, 'OPTIONS', answer.headers);
  res.writeHead(204, answer.headers);
  res.end();
}

/** RFC 9110: a failed If-Match / If-Unmodified-Since is 412; otherwise the client's copy is current (304). */
function notModifiedOrFailed(
  res: ServerResponse,
  method: string,
  object: ObjectRecord,
  headers: { ifMatch?: string | undefined; ifUnmodifiedSince?: string | undefined },
  cors: Record<string, string>,
): void {
  const strict = conditionalFromHeaders({ ifMatch: headers.ifMatch, ifUnmodifiedSince: headers.ifUnmodifiedSince });
  if (!conditionHolds(strict, object)) return sendPage(res, 412, method, cors);
  const { etag, 'last-modified': lastModified } = objectHeaders(object);
  const kept: Record<string, string> = { etag: etag!, 'last-modified': lastModified!, ...cors };
  if (object.httpMetadata.cacheControl) kept['cache-control'] = object.httpMetadata.cacheControl;
  if (object.httpMetadata.cacheExpiry !== undefined)
    kept['expires'] = new Date(object.httpMetadata.cacheExpiry).toUTCString();
  res.writeHead(304, kept);
  res.end();
}

function objectHeaders(object: ObjectRecord): Record<string, string> {
  const http = object.httpMetadata;
  const headers: Record<string, string> = {
    etag: `"${object.etag}"`,
    'last-modified': new Date(object.uploaded).toUTCString(),
    'accept-ranges': 'bytes',
    'content-type': http.contentType ?? 'application/octet-stream',
  };
  if (http.contentLanguage) headers['content-language'] = http.contentLanguage;
  if (http.contentDisposition) headers['content-disposition'] = http.contentDisposition;
  if (http.contentEncoding) headers['content-encoding'] = http.contentEncoding;
  if (http.cacheControl) headers['cache-control'] = http.cacheControl;
  if (http.cacheExpiry !== undefined) headers['expires'] = new Date(http.cacheExpiry).toUTCString();
  return headers;
}

function ifRangeHolds(ifRange: string, object: ObjectRecord): boolean {
  if (ifRange.startsWith('"')) return ifRange === `"${object.etag}"`;
  if (ifRange.startsWith('W/')) return false;
  const date = Date.parse(ifRange);
  return !Number.isNaN(date) && Math.floor(object.uploaded / 1000) * 1000 <= date;
}

/** A single range that starts past the end (or asks for the last 0 bytes): 416, as HTTP servers answer. */
function unsatisfiable(header: string, size: number): boolean {
  const match = SINGLE_RANGE.exec(header.trim());
  if (!match) return false;
  const [, first = '', last = ''] = match;
  if (first !== '') return Number(first) >= size;
  return last !== '' && (Number(last) === 0 || size === 0);
}

/** The object key of a request target: its path without the leading `/`, percent-decoded (no dot-segment folding). */
function keyOf(url: string | undefined): string | undefined {
  let path = url ?? '/';
  if (!path.startsWith('/')) {
    const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(path);
    if (!absolute) return undefined;
    path = absolute[1] || '/';
  }
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  try {
    return decodeURIComponent(path.slice(1));
  } catch {
    return undefined;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A refused request's body is not read: the connection closes after the answer instead (node:http would
 * otherwise read and discard all of it to keep the connection).
 */
function closeIfBody(req: IncomingMessage): Record<string, string> {
  const length = req.headers['content-length'];
  const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  return hasBody ? { connection: 'close' } : {};
}
