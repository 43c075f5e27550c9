import type { Agent, IncomingMessage } from 'node:http';
import { parseEnvelope, type ApiClient, type ApiResponse, type Query } from './api-client.ts';
import { objectPath } from './r2.ts';
import type { ObjectSummary, UploadedObject } from './wire.ts';

/*
 * The object transfers of `ledge object put|get`, sent with node:http rather than fetch, so that the CLI moving a
 * large file stays small:
 * - fetch copies a byte body before sending it, and those copies wait for a garbage collection (a 300 MiB upload
 *   reached ~240 MiB); here the caller's buffer is written as it is and can be reused for the next part;
 * - fetch's body reads ahead of a slower disk (~85 MiB for a 300 MiB download); a node:http response paces the
 *   socket as it is read;
 * - fetch (and Response) load Node's bundled undici, ~15 MiB of memory for the rest of the run.
 * node:http is taken with process.getBuiltinModule, not an ES import: importing node:http builds its module
 * namespace by reading every export, and the `WebSocket` getter among them loads undici all the same.
 */

/**
 * Keep-alive: one connection per part in flight, reused. The https agent (and TLS) only for an https API. Made
 * on first use: the dashboard's browser bundle includes the client and must not touch node: modules on load.
 */
let httpAgent: Agent | undefined;
let httpsAgent: Agent | undefined;

/** Sends one request to `path` under the API URL; resolves with the response, its body not read. */
function send(
  api: ApiClient,
  method: string,
  path: string,
  options: { query?: Query; body?: Uint8Array; json?: unknown; headers?: Record<string, string> } = {},
): Promise<IncomingMessage> {
  const url = new URL(`${api.apiUrl}${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { ...api.requestHeaders(method), ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    body = Buffer.from(JSON.stringify(options.json));
    headers['content-type'] = 'application/json';
  }
  if (body) headers['content-length'] = String(body.byteLength);
  const http = process.getBuiltinModule('node:http');
  const https = url.protocol === 'https:' ? process.getBuiltinModule('node:https') : undefined;
  const agent = https
    ? (httpsAgent ??= new https.Agent({ keepAlive: true }))
    : (httpAgent ??= new http.Agent({ keepAlive: true }));
  return new Promise((resolve, reject) => {
    const req = (https ?? http).request(url, { method, agent, headers }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads a response's v4 envelope; throws `ApiError` when it is a failure. */
function readJson<T>(res: IncomingMessage): Promise<ApiResponse<T>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      try {
        resolve(parseEnvelope<T>(res.statusCode ?? 500, Buffer.concat(chunks).toString()));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

const uploads = (accountId: string, bucket: string) =>
  `/accounts/${encodeURIComponent(accountId)}/r2/buckets/${encodeURIComponent(bucket)}/uploads`;

/** Starts a multipart upload (Ledge's /client/v4 extension); answers its id. */
export async function createUpload(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  contentType?: string,
): Promise<string> {
  const json = { key, ...(contentType ? { content_type: contentType } : {}) };
  return (await readJson<{ upload_id: string }>(await send(api, 'POST', uploads(accountId, bucket), { json }))).result
    .upload_id;
}

/** Sends one part (the caller's buffer as it is: it may reuse it once this resolves) and answers its etag. */
export async function uploadPart(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  uploadId: string,
  partNumber: number,
  bytes: Uint8Array,
): Promise<string> {
  const path = `${uploads(accountId, bucket)}/${encodeURIComponent(uploadId)}/parts/${partNumber}`;
  const res = await send(api, 'PUT', path, { query: { key }, body: bytes });
  return (await readJson<{ etag: string }>(res)).result.etag;
}

/** Uploads a small object in one PUT from bytes in memory (larger ones go in parts). */
export async function putObjectBytes(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  bytes: Uint8Array,
  contentType?: string,
): Promise<ObjectSummary> {
  const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
  const res = await send(api, 'PUT', objectPath(accountId, bucket, key), { body: bytes, headers });
  // The upload answer types `size` as a string (as Cloudflare's SDK does); the listing's is a number.
  const stored = (await readJson<UploadedObject>(res)).result;
  return { ...stored, size: Number(stored.size) };
}

/** Publishes the parts as one object. */
export async function completeUpload(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  uploadId: string,
  parts: { part_number: number; etag: string }[],
): Promise<ObjectSummary> {
  const path = `${uploads(accountId, bucket)}/${encodeURIComponent(uploadId)}/complete`;
  const res = await send(api, 'POST', path, { json: { parts }, query: { key } });
  const stored = (await readJson<UploadedObject>(res)).result;
  return { ...stored, size: Number(stored.size) };
}

/** Abandons an upload: its parts are deleted. */
export async function abortUpload(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  uploadId: string,
): Promise<void> {
  await readJson(
    await send(api, 'DELETE', `${uploads(accountId, bucket)}/${encodeURIComponent(uploadId)}`, { query: { key } }),
  );
}

/**
 * Opens an object's body as a Node stream, read at the pace of its consumer. Rejects with the API's error when
 * it is not there.
 */
export async function openObject(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
): Promise<IncomingMessage> {
  const res = await send(api, 'GET', objectPath(accountId, bucket, key));
  if ((res.statusCode ?? 500) < 300) return res;
  await readJson(res);
  throw new Error(`HTTP ${res.statusCode}`);
}
