import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readEnvelope, type ApiClient } from './api-client.ts';
import type { ObjectSummary } from './r2.ts';

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
  const body = { key, ...(contentType ? { content_type: contentType } : {}) };
  return (await api.request<{ upload_id: string }>('POST', uploads(accountId, bucket), { body })).result.upload_id;
}

/** Keep-alive for the parts of one upload: one connection per part in flight, reused. */
const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/**
 * Sends one part and answers its etag. Sent with node:http rather than fetch: fetch copies a byte body
 * before sending it, and those copies wait for a garbage collection, which let a 300 MiB upload reach
 * ~240 MiB of memory; here the caller's buffer is written as it is and can be reused for the next part.
 */
export function uploadPart(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  uploadId: string,
  partNumber: number,
  bytes: Uint8Array,
): Promise<string> {
  const url = new URL(`${api.apiUrl}${uploads(accountId, bucket)}/${encodeURIComponent(uploadId)}/parts/${partNumber}`);
  url.searchParams.set('key', key);
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'PUT',
        agent: secure ? httpsAgent : httpAgent,
        headers: { ...api.requestHeaders(), 'content-length': String(bytes.byteLength) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const answer = new Response(Buffer.concat(chunks), {
            status: res.statusCode ?? 500,
            headers: { 'content-type': String(res.headers['content-type'] ?? '') },
          });
          readEnvelope<{ etag: string }>(answer).then((body) => resolve(body.result.etag), reject);
        });
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
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
  const stored = (
    await api.request<Omit<ObjectSummary, 'size'> & { size: string | number }>('POST', path, {
      body: { parts },
      query: { key },
    })
  ).result;
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
  await api.request('DELETE', `${uploads(accountId, bucket)}/${encodeURIComponent(uploadId)}`, { query: { key } });
}

/**
 * Opens an object's body as a Node stream (node:http, so reading it paces the socket: fetch's body read ahead
 * of a slower disk, ~85 MiB for a 300 MiB download). Rejects with the API's error when it is not there.
 */
export function openObject(api: ApiClient, accountId: string, bucket: string, key: string): Promise<IncomingMessage> {
  const path = `/accounts/${encodeURIComponent(accountId)}/r2/buckets/${encodeURIComponent(bucket)}/objects/${key
    .split('/')
    .map(encodeURIComponent)
    .join('/')}`;
  const url = new URL(`${api.apiUrl}${path}`);
  const secure = url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: 'GET', agent: secure ? httpsAgent : httpAgent, headers: api.requestHeaders() },
      (res) => {
        if ((res.statusCode ?? 500) < 300) return resolve(res);
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const answer = new Response(Buffer.concat(chunks), {
            status: res.statusCode ?? 500,
            headers: { 'content-type': String(res.headers['content-type'] ?? '') },
          });
          readEnvelope(answer).then(() => reject(new Error(`HTTP ${res.statusCode}`)), reject);
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
