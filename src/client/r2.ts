import { readEnvelope, type ApiClient } from './api-client.ts';
import type { Bucket, ObjectSummary, UploadedObject } from './wire.ts';

export type { ObjectSummary } from './wire.ts';

const buckets = (accountId: string) => `/accounts/${encodeURIComponent(accountId)}/r2/buckets`;
export const objectPath = (accountId: string, bucket: string, key: string) =>
  `${buckets(accountId)}/${encodeURIComponent(bucket)}/objects/${key.split('/').map(encodeURIComponent).join('/')}`;

/** Creates an R2 bucket (code 10004 when the account already has one of that name). */
export async function createBucket(
  api: ApiClient,
  accountId: string,
  name: string,
  options: { locationHint?: string } = {},
): Promise<Bucket> {
  return (await api.request<Bucket>('POST', buckets(accountId), { body: { name, ...options } })).result;
}

/** Every bucket of the account, following `result_info.cursor` to the end. */
export async function listBuckets(
  api: ApiClient,
  accountId: string,
  options: { nameContains?: string } = {},
): Promise<Bucket[]> {
  const all: Bucket[] = [];
  let cursor: string | undefined;
  do {
    const { result, result_info } = await api.request<{ buckets: Bucket[] }>('GET', buckets(accountId), {
      query: { per_page: 1000, cursor, name_contains: options.nameContains },
    });
    all.push(...result.buckets);
    cursor = result_info?.cursor;
  } while (cursor);
  return all;
}

/** One bucket (code 10006 when it does not exist). */
export async function getBucket(api: ApiClient, accountId: string, name: string): Promise<Bucket> {
  return (await api.request<Bucket>('GET', `${buckets(accountId)}/${encodeURIComponent(name)}`)).result;
}

/** Deletes an empty bucket (code 10008 when it still holds objects). */
export async function deleteBucket(api: ApiClient, accountId: string, name: string): Promise<void> {
  await api.request('DELETE', `${buckets(accountId)}/${encodeURIComponent(name)}`);
}

/** Uploads an object; `body` streams (a file stream needs `size` so Content-Length is known). */
export async function putObject(
  api: ApiClient,
  accountId: string,
  bucket: string,
  key: string,
  body: ReadableStream<Uint8Array> | Uint8Array,
  options: { size?: number; contentType?: string } = {},
): Promise<ObjectSummary> {
  const headers: Record<string, string> = {};
  if (options.size !== undefined) headers['content-length'] = String(options.size);
  if (options.contentType) headers['content-type'] = options.contentType;
  // Node's fetch sends any Uint8Array; the DOM's typing (the dashboard also compiles this client) wants one over an
  // ArrayBuffer.
  const rawBody = body as RequestInit['body'];
  const response = await api.raw('PUT', objectPath(accountId, bucket, key), { rawBody, headers, duplex: 'half' });
  // The upload answer types `size` as a string (as Cloudflare's SDK does); the listing's is a number.
  const stored = (await readEnvelope<UploadedObject>(response)).result;
  return { ...stored, size: Number(stored.size) };
}

/** Downloads an object: the raw Response, body not yet read (code 10007 when missing). */
export async function getObject(api: ApiClient, accountId: string, bucket: string, key: string): Promise<Response> {
  const response = await api.raw('GET', objectPath(accountId, bucket, key));
  if (!response.ok) await readEnvelope(response);
  return response;
}

export async function deleteObject(api: ApiClient, accountId: string, bucket: string, key: string): Promise<void> {
  await api.request('DELETE', objectPath(accountId, bucket, key));
}

/** Every object under `prefix`, following the cursor to the end. */
export async function listObjects(
  api: ApiClient,
  accountId: string,
  bucket: string,
  options: { prefix?: string } = {},
): Promise<ObjectSummary[]> {
  const all: ObjectSummary[] = [];
  let cursor: string | undefined;
  do {
    const { result, result_info } = await api.request<ObjectSummary[]>(
      'GET',
      `${buckets(accountId)}/${encodeURIComponent(bucket)}/objects`,
      {
        query: { prefix: options.prefix, cursor, per_page: 1000 },
      },
    );
    all.push(...result);
    cursor = result_info?.cursor;
  } while (cursor);
  return all;
}

/** One page of a listing by "folder": the objects under `prefix`, and the deeper prefixes (with `delimiter`). */
export interface ObjectPage {
  objects: ObjectSummary[];
  /** The common prefixes up to the next delimiter (R2's `delimited`). */
  folders: string[];
  /** Where the next page starts, when the listing was cut. */
  cursor: string | undefined;
}

export async function listObjectPage(
  api: ApiClient,
  accountId: string,
  bucket: string,
  options: { prefix?: string; delimiter?: string; perPage?: number; cursor?: string | undefined } = {},
): Promise<ObjectPage> {
  const { result, result_info } = await api.request<ObjectSummary[]>(
    'GET',
    `${buckets(accountId)}/${encodeURIComponent(bucket)}/objects`,
    {
      query: {
        prefix: options.prefix,
        delimiter: options.delimiter,
        per_page: options.perPage,
        cursor: options.cursor,
      },
    },
  );
  const info = result_info ?? {};
  return {
    objects: result,
    folders: (info['delimited'] ?? []) as string[],
    cursor: info.is_truncated && info.cursor ? String(info.cursor) : undefined,
  };
}

/** One lifecycle rule as the API shows it (ages in seconds). */
export interface LifecycleRuleSummary {
  id: string;
  enabled: boolean;
  conditions?: { prefix?: string };
  deleteObjectsTransition?: { condition?: LifecycleConditionSummary };
  abortMultipartUploadsTransition?: { condition?: LifecycleConditionSummary };
  storageClassTransitions?: { condition: LifecycleConditionSummary; storageClass: string }[];
}
export type LifecycleConditionSummary = { type: 'Age'; maxAge: number } | { type: 'Date'; date: string };

/** A bucket's lifecycle rules (code 10006 when the bucket does not exist). */
export async function getLifecycleRules(
  api: ApiClient,
  accountId: string,
  bucket: string,
): Promise<LifecycleRuleSummary[]> {
  const path = `${buckets(accountId)}/${encodeURIComponent(bucket)}/lifecycle`;
  return (await api.request<{ rules?: LifecycleRuleSummary[] }>('GET', path)).result.rules ?? [];
}

/** Replaces a bucket's whole rule set. */
export async function putLifecycleRules(
  api: ApiClient,
  accountId: string,
  bucket: string,
  rules: LifecycleRuleSummary[],
): Promise<void> {
  await api.request('PUT', `${buckets(accountId)}/${encodeURIComponent(bucket)}/lifecycle`, { body: { rules } });
}
