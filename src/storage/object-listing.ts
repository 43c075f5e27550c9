import { R2Errors } from './errors.ts';
import type { MetadataStore, ObjectListQuery } from './metadata-store.ts';
import { prefixUpperBound } from './keys.ts';
import type { BucketRecord, ObjectRecord } from './types.ts';
import { assertListLimit } from './validation.ts';

export interface ListOptions {
  prefix?: string | undefined;
  delimiter?: string | undefined;
  cursor?: string | undefined;
  startAfter?: string | undefined;
  limit?: number | undefined;
}

export interface ListResult {
  objects: ObjectRecord[];
  delimitedPrefixes: string[];
  truncated: boolean;
  cursor: string | undefined;
}

/** Where a listing resumes: after a key, or at the first key past a delimited prefix. */
type Position = { startAfter: string } | { startAt: string } | undefined;

/**
 * R2's list: keys in byte order, optionally folded into delimited prefixes (each prefix counts against
 * `limit` like an object), resumable with an opaque cursor that is present only when truncated.
 */
export async function listObjects(
  store: MetadataStore,
  bucket: BucketRecord,
  options: ListOptions,
): Promise<ListResult> {
  const limit = options.limit ?? 1000;
  assertListLimit(limit);
  const prefix = options.prefix ?? '';
  const delimiter = options.delimiter === '' ? undefined : options.delimiter;
  let position: Position = options.cursor !== undefined ? decodeCursor(options.cursor) : undefined;
  if (!position && options.startAfter) position = { startAfter: options.startAfter };

  const objects: ObjectRecord[] = [];
  const delimitedPrefixes: string[] = [];
  let truncated = false;
  scan: for (;;) {
    const want = limit - objects.length - delimitedPrefixes.length + 1;
    const query: ObjectListQuery = { prefix, limit: want, ...position };
    const batch = await store.listObjects(bucket.id, query);
    for (const object of batch) {
      if (objects.length + delimitedPrefixes.length === limit) {
        truncated = true;
        break scan;
      }
      const folded = delimiter ? foldedPrefix(object.key, prefix, delimiter) : undefined;
      if (folded !== undefined) {
        delimitedPrefixes.push(folded);
        const next = prefixUpperBound(folded);
        if (next === null) break scan;
        position = { startAt: next };
        continue scan;
      }
      objects.push(object);
      position = { startAfter: object.key };
    }
    if (batch.length < want) break;
  }
  return { objects, delimitedPrefixes, truncated, cursor: truncated ? encodeCursor(position) : undefined };
}

function foldedPrefix(key: string, prefix: string, delimiter: string): string | undefined {
  const index = key.indexOf(delimiter, prefix.length);
  return index === -1 ? undefined : key.slice(0, index + delimiter.length);
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position ?? {}), 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): Position {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof value['startAfter'] === 'string') return { startAfter: value['startAfter'] };
    if (typeof value['startAt'] === 'string') return { startAt: value['startAt'] };
  } catch {
    // fall through to the error below
  }
  throw R2Errors.invalidArgument('The cursor is not valid: pass the cursor of the previous list result.');
}
