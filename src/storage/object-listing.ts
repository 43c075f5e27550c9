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
  const position = startPosition(options.cursor, options.startAfter);
  return scan(store, bucket, { limit, prefix, delimiter }, position);
}

const FEW_AFTER_FOLD = 4;

async function scan(
  store: MetadataStore,
  bucket: BucketRecord,
  { limit, prefix, delimiter }: { limit: number; prefix: string; delimiter: string | undefined },
  start: Position,
): Promise<ListResult> {
  let position = start;
  const objects: ObjectRecord[] = [];
  const delimitedPrefixes: string[] = [];
  let truncated = false;
  let afterFold = false;
  scan: for (;;) {
    const room = limit - objects.length - delimitedPrefixes.length + 1;
    // Right after a folded prefix the next key often starts another one (a bucket of folders): read a few rows
    // there, not a page's worth of which one would be used (100 folders were 10,000 rows read for 100).
    const want = afterFold ? Math.min(room, FEW_AFTER_FOLD) : room;
    afterFold = false;
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
        afterFold = true;
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

/**
 * Where a listing starts: the later of the cursor's position and `startAfter` (a cursor does not undo
 * a startAfter past it, as in R2's simulator).
 */
function startPosition(cursor: string | undefined, startAfter: string | undefined): Position {
  const resumed = cursor !== undefined ? decodeCursor(cursor) : undefined;
  if (!startAfter) return resumed;
  if (!resumed) return { startAfter };
  const resumedAt = 'startAfter' in resumed ? resumed.startAfter : resumed.startAt;
  return Buffer.compare(Buffer.from(startAfter), Buffer.from(resumedAt)) >= 0 ? { startAfter } : resumed;
}

function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify(position ?? {}), 'utf8').toString('base64url');
}

/**
 * Our cursors are base64url JSON. Any other string is read as R2's simulator reads every cursor: the
 * base64 of the key to list after. So a cursor is never refused: a malformed one lists from wherever
 * it decodes to (typically past every key), as there.
 */
function decodeCursor(cursor: string): Position {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value && typeof value === 'object') {
      const fields = value as Record<string, unknown>;
      if (typeof fields['startAfter'] === 'string') return { startAfter: fields['startAfter'] };
      if (typeof fields['startAt'] === 'string') return { startAt: fields['startAt'] };
    }
  } catch {
    // not one of ours: read below as the simulator does
  }
  return { startAfter: Buffer.from(cursor, 'base64').toString('utf8') };
}
