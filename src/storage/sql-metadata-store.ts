import { dialects, type DialectName, type SqlDatabase, type SqlExecutor, type SqlTransaction } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import type {
  BucketDeleteResult,
  BucketListQuery,
  CommitResult,
  CompleteResult,
  BucketUsage,
  MetadataStore,
  ObjectListQuery,
  PartResult,
} from './metadata-store.ts';
import { prefixUpperBound } from './keys.ts';
import { R2Errors } from './errors.ts';
import {
  OBJECT_METADATA_COLUMNS,
  segmentsJson,
  toBucket,
  toObject,
  toPart,
  toUpload,
  type BucketRow,
  type ObjectRow,
  type PartRow,
  type UploadRow,
} from './metadata-rows.ts';
import type { LifecycleRule } from './lifecycle-rules.ts';
import type { CorsRule } from './cors-rules.ts';
import type { BucketRecord, ObjectRecord, PartRecord, StorageClass, UploadRecord } from './types.ts';

/**
 * Appended to the SELECT of a bucket or upload row that a write depends on: writers share it, and the
 * delete of that bucket or the completion of that upload (FOR UPDATE) waits for them, then finds the
 * objects or parts they wrote. SQLite's writers are serial already.
 */
const FOR_SHARE: Record<DialectName, string> = { sqlite: '', postgres: ' FOR SHARE' };

/** How many rows `referencedBlobIds` reads at a time (bounded memory on any table size). */
const SCAN_PAGE = 1000;

/**
 * The MetadataStore on the persistence contract, for both dialects (SQLite: the embedded default;
 * PostgreSQL: several nodes on one database).
 *
 * Reads outside a transaction go to SQLite's read connection and never wait for a writer (the GET hot
 * path). On PostgreSQL (READ COMMITTED) every write that checks before it writes locks what it checks:
 * the bucket row (shared), the upload row, and the object key (an advisory lock, as the row may not
 * exist yet), always in that order so that no two writers wait for each other in a cycle.
 */
export class SqlMetadataStore implements MetadataStore {
  readonly #db: SqlDatabase;
  readonly #forShare: string;
  readonly #forUpdate: string;
  /** PostgreSQL's text cannot hold U+0000, which SQLite's can: such a key cannot be stored there. */
  readonly #nulFree: boolean;

  /** Stamps the rows it writes itself (lifecycle rules' updated_at, finished uploads). */
  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
    this.#forShare = FOR_SHARE[db.dialect];
    this.#forUpdate = dialects[db.dialect].forUpdate;
    this.#nulFree = db.dialect === 'postgres';
  }

  async createBucket(bucket: BucketRecord): Promise<boolean> {
    const result = await this.#db.run(
      `INSERT INTO r2_buckets (id, account_id, name, created_at, location, storage_class, jurisdiction)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, name) DO NOTHING`,
      [
        bucket.id,
        bucket.accountId,
        bucket.name,
        bucket.createdAt,
        bucket.location,
        bucket.storageClass,
        bucket.jurisdiction,
      ],
    );
    return result.changes === 1;
  }

  async bucketUsage(bucketId: string): Promise<BucketUsage> {
    const row = await this.#db.get<{ objects: number | string; payload: number | string; metadata: number | string }>(
      `SELECT COUNT(*) AS objects, COALESCE(SUM(size), 0) AS payload,
         COALESCE(SUM(LENGTH(key) + LENGTH(http_metadata) + LENGTH(custom_metadata)), 0) AS metadata
       FROM r2_objects WHERE bucket_id = ?`,
      [bucketId],
    );
    // PostgreSQL answers COUNT and SUM of BIGINT as text.
    return {
      objectCount: Number(row?.objects ?? 0),
      payloadSize: Number(row?.payload ?? 0),
      metadataSize: Number(row?.metadata ?? 0),
    };
  }

  async getBucket(accountId: string, name: string): Promise<BucketRecord | undefined> {
    const row = await this.#db.get<BucketRow>('SELECT * FROM r2_buckets WHERE account_id = ? AND name = ?', [
      accountId,
      name,
    ]);
    return row && toBucket(row);
  }

  async listBuckets(accountId: string, query: BucketListQuery): Promise<BucketRecord[]> {
    const asc = query.direction === 'asc';
    const contains = dialects[this.#db.dialect].position('name', '?');
    // CAST: PostgreSQL cannot type a parameter that is only compared with NULL.
    const rows = await this.#db.all<BucketRow>(
      `SELECT * FROM r2_buckets
       WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR name ${asc ? '>' : '<'} ?)
         AND (CAST(? AS TEXT) IS NULL OR ${contains} > 0)
       ORDER BY name ${asc ? 'ASC' : 'DESC'} LIMIT ?`,
      [
        accountId,
        query.after ?? null,
        query.after ?? null,
        query.nameContains ?? null,
        query.nameContains ?? null,
        query.limit,
      ],
    );
    return rows.map(toBucket);
  }

  async updateBucket(
    accountId: string,
    name: string,
    patch: { storageClass?: StorageClass },
  ): Promise<BucketRecord | undefined> {
    if (patch.storageClass) {
      await this.#db.run('UPDATE r2_buckets SET storage_class = ? WHERE account_id = ? AND name = ?', [
        patch.storageClass,
        accountId,
        name,
      ]);
    }
    return this.getBucket(accountId, name);
  }

  async deleteBucket(accountId: string, name: string): Promise<BucketDeleteResult> {
    return this.#db.transaction(async (tx): Promise<BucketDeleteResult> => {
      // Locked: writers into this bucket finish first (their objects make it not empty), later ones find it gone.
      const bucket = await tx.get<{ id: string }>(
        `SELECT id FROM r2_buckets WHERE account_id = ? AND name = ?${this.#forUpdate}`,
        [accountId, name],
      );
      if (!bucket) return { status: 'missing' };
      if (await tx.get('SELECT 1 AS one FROM r2_objects WHERE bucket_id = ? LIMIT 1', [bucket.id])) {
        return { status: 'not-empty' };
      }
      const parts = await tx.all<PartRow>(
        'SELECT p.* FROM r2_parts p JOIN r2_uploads u ON u.upload_id = p.upload_id WHERE u.bucket_id = ?',
        [bucket.id],
      );
      await tx.run('DELETE FROM r2_buckets WHERE id = ?', [bucket.id]);
      return { status: 'deleted', discardedParts: parts.map(toPart) };
    });
  }

  async getObject(bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    if (!this.#storable(key)) return undefined;
    const row = await this.#db.get<ObjectRow>('SELECT * FROM r2_objects WHERE bucket_id = ? AND key = ?', [
      bucketId,
      key,
    ]);
    return row && toObject(row);
  }

  async commitObject(
    object: ObjectRecord,
    precondition?: (current: ObjectRecord | undefined) => boolean,
  ): Promise<CommitResult> {
    this.#assertStorable(object.key);
    const result = await this.#db.transaction(async (tx): Promise<CommitResult> => {
      if (!(await this.#shareBucket(tx, object.bucketId))) return { status: 'no-bucket' };
      const current = await this.#lockObject(tx, object.bucketId, object.key);
      if (precondition && !precondition(current)) return { status: 'precondition-failed', current };
      await upsertObject(tx, object);
      return { status: 'committed', replaced: current };
    });
    if (result.status === 'committed') await this.#db.durable();
    return result;
  }

  async deleteObjects(bucketId: string, keys: readonly string[]): Promise<ObjectRecord[]> {
    const removed = await this.#db.transaction(async (tx) => {
      const removed: ObjectRecord[] = [];
      // One order for every deleter, so two batches naming the same keys cannot deadlock on PostgreSQL.
      for (const key of [...new Set(keys.filter((k) => this.#storable(k)))].sort()) {
        const current = await this.#selectObjectForUpdate(tx, bucketId, key);
        if (!current) continue;
        await tx.run('DELETE FROM r2_objects WHERE bucket_id = ? AND key = ?', [bucketId, key]);
        removed.push(current);
      }
      return removed;
    });
    if (removed.length > 0) await this.#db.durable();
    return removed;
  }

  async listObjects(bucketId: string, query: ObjectListQuery): Promise<ObjectRecord[]> {
    const prefix = query.prefix ?? '';
    const upper = prefix === '' ? null : prefixUpperBound(prefix);
    // One lower bound only, the highest of prefix, startAt and startAfter (compared as the database does, byte by
    // byte): with several, or with optional ones (`? IS NULL OR key >= ?`), the index seeks to the prefix and
    // walks every key up to the position, and a listing of a bucket's 100 folders read the whole bucket 100 times.
    let lower = { key: prefix, exclusive: false };
    if (query.startAt !== undefined && bytewise(query.startAt, lower.key) > 0)
      lower = { key: query.startAt, exclusive: false };
    if (query.startAfter !== undefined && bytewise(query.startAfter, lower.key) >= 0)
      lower = { key: query.startAfter, exclusive: true };
    const conditions = ['bucket_id = ?', lower.exclusive ? 'key > ?' : 'key >= ?'];
    const params: (string | number)[] = [bucketId, lower.key];
    if (upper !== null) {
      conditions.push('key < ?');
      params.push(upper);
    }
    params.push(query.limit);
    // Byte-wise key order: SQLite's BINARY collation, the column's COLLATE "C" on PostgreSQL.
    const rows = await this.#db.all<ObjectRow>(
      `SELECT ${OBJECT_METADATA_COLUMNS} FROM r2_objects WHERE ${conditions.join(' AND ')} ORDER BY key LIMIT ?`,
      params,
    );
    return rows.map(toObject);
  }

  async createUpload(upload: UploadRecord): Promise<boolean> {
    this.#assertStorable(upload.key);
    return this.#db.transaction(async (tx) => {
      if (!(await this.#shareBucket(tx, upload.bucketId))) return false;
      await tx.run(
        `INSERT INTO r2_uploads (upload_id, bucket_id, key, created_at, http_metadata, custom_metadata, storage_class, ssec)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          upload.uploadId,
          upload.bucketId,
          upload.key,
          upload.createdAt,
          JSON.stringify(upload.httpMetadata),
          JSON.stringify(upload.customMetadata),
          upload.storageClass,
          upload.ssec ? JSON.stringify(upload.ssec) : null,
        ],
      );
      return true;
    });
  }

  getUpload(bucketId: string, uploadId: string): Promise<UploadRecord | undefined> {
    return selectUpload(this.#db, bucketId, uploadId, '');
  }

  listParts(uploadId: string): Promise<PartRecord[]> {
    return partsOf(this.#db, uploadId);
  }

  async listUploads(
    bucketId: string,
    query: { prefix: string; after?: { key: string; uploadId: string } | undefined; limit: number },
  ): Promise<UploadRecord[]> {
    const upper = query.prefix === '' ? null : prefixUpperBound(query.prefix);
    const afterKey = query.after?.key ?? null;
    const afterId = query.after?.uploadId ?? '';
    const rows = await this.#db.all<UploadRow>(
      `SELECT * FROM r2_uploads WHERE bucket_id = ? AND key >= ? AND (CAST(? AS TEXT) IS NULL OR key < ?)
         AND (CAST(? AS TEXT) IS NULL OR key > ? OR (key = ? AND upload_id > ?))
       ORDER BY key, upload_id LIMIT ?`,
      [bucketId, query.prefix, upper, upper, afterKey, afterKey, afterKey, afterId, query.limit],
    );
    return rows.map(toUpload);
  }

  async putPart(bucketId: string, part: PartRecord): Promise<PartResult> {
    const result = await this.#db.transaction(async (tx): Promise<PartResult> => {
      // Shared: parts of one upload arrive in parallel; its completion or abort waits for them.
      if (!(await selectUpload(tx, bucketId, part.uploadId, this.#forShare))) return { status: 'no-upload' };
      // Two uploads of one part number: the second sees the first as replaced (its blob becomes garbage).
      await tx.lock(`r2:part:${part.uploadId}:${part.partNumber}`);
      const replaced = await tx.get<PartRow>('SELECT * FROM r2_parts WHERE upload_id = ? AND part_number = ?', [
        part.uploadId,
        part.partNumber,
      ]);
      await tx.run(
        `INSERT INTO r2_parts (upload_id, part_number, blob_id, size, etag, md5, uploaded_at, iv) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (upload_id, part_number) DO UPDATE SET
           blob_id = excluded.blob_id, size = excluded.size, etag = excluded.etag, md5 = excluded.md5,
           uploaded_at = excluded.uploaded_at, iv = excluded.iv`,
        [part.uploadId, part.partNumber, part.blobId, part.size, part.etag, part.md5, part.uploadedAt, part.iv ?? null],
      );
      return { status: 'stored', replaced: replaced && toPart(replaced) };
    });
    if (result.status === 'stored') await this.#db.durable();
    return result;
  }

  async completeUpload(
    bucketId: string,
    uploadId: string,
    build: (upload: UploadRecord, parts: PartRecord[]) => ObjectRecord,
  ): Promise<CompleteResult> {
    const result = await this.#db.transaction(async (tx): Promise<CompleteResult> => {
      if (!(await this.#shareBucket(tx, bucketId))) return { status: 'no-upload' };
      // Two completions of one upload: the second waits, then finds it finished.
      const upload = await selectUpload(tx, bucketId, uploadId, this.#forUpdate);
      if (!upload) return { status: 'no-upload' };
      const parts = await partsOf(tx, uploadId);
      const object = build(upload, parts);
      const replaced = await this.#lockObject(tx, bucketId, upload.key);
      await upsertObject(tx, object);
      await finishUpload(tx, upload, this.#clock.now());
      const used = new Set(object.segments.map((s) => s.blobId));
      return { status: 'completed', object, replaced, unusedParts: parts.filter((p) => !used.has(p.blobId)) };
    });
    if (result.status === 'completed') await this.#db.durable();
    return result;
  }

  async abortUpload(bucketId: string, uploadId: string): Promise<PartRecord[] | undefined> {
    return this.#db.transaction(async (tx) => {
      const upload = await selectUpload(tx, bucketId, uploadId, this.#forUpdate);
      if (!upload) return undefined;
      const parts = await partsOf(tx, uploadId);
      await finishUpload(tx, upload, this.#clock.now());
      return parts;
    });
  }

  async finishedUploadKey(bucketId: string, uploadId: string): Promise<string | undefined> {
    const row = await this.#db.get<{ key: string }>(
      'SELECT key FROM r2_finished_uploads WHERE upload_id = ? AND bucket_id = ?',
      [uploadId, bucketId],
    );
    return row?.key;
  }

  async forgetFinishedUploads(time: number): Promise<number> {
    return (await this.#db.run('DELETE FROM r2_finished_uploads WHERE finished_at < ?', [time])).changes;
  }

  async getLifecycle(bucketId: string): Promise<LifecycleRule[]> {
    const row = await this.#db.get<{ rules: string }>('SELECT rules FROM r2_bucket_lifecycle WHERE bucket_id = ?', [
      bucketId,
    ]);
    return row ? (JSON.parse(row.rules) as LifecycleRule[]) : [];
  }

  async putLifecycle(bucketId: string, rules: readonly LifecycleRule[]): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      if (!(await this.#shareBucket(tx, bucketId))) return false;
      await tx.run(
        `INSERT INTO r2_bucket_lifecycle (bucket_id, rules, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (bucket_id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
        [bucketId, JSON.stringify(rules), this.#clock.now()],
      );
      return true;
    });
  }

  async getCors(bucketId: string): Promise<CorsRule[] | undefined> {
    const row = await this.#db.get<{ rules: string }>('SELECT rules FROM r2_bucket_cors WHERE bucket_id = ?', [
      bucketId,
    ]);
    return row ? (JSON.parse(row.rules) as CorsRule[]) : undefined;
  }

  async putCors(bucketId: string, rules: readonly CorsRule[]): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      if (!(await this.#shareBucket(tx, bucketId))) return false;
      await tx.run(
        `INSERT INTO r2_bucket_cors (bucket_id, rules, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (bucket_id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
        [bucketId, JSON.stringify(rules), this.#clock.now()],
      );
      return true;
    });
  }

  async deleteCors(bucketId: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM r2_bucket_cors WHERE bucket_id = ?', [bucketId])).changes > 0;
  }

  async bucketsWithLifecycle(): Promise<{ bucket: BucketRecord; rules: LifecycleRule[] }[]> {
    const rows = await this.#db.all<BucketRow & { rules: string }>(
      `SELECT b.*, l.rules FROM r2_buckets b JOIN r2_bucket_lifecycle l ON l.bucket_id = b.id
       WHERE l.rules <> '[]' ORDER BY b.id`,
    );
    return rows.map((row) => ({ bucket: toBucket(row), rules: JSON.parse(row.rules) as LifecycleRule[] }));
  }

  async deleteObjectVersions(
    bucketId: string,
    targets: readonly { key: string; version: string }[],
  ): Promise<ObjectRecord[]> {
    const ordered = [...targets].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const removed = await this.#db.transaction(async (tx) => {
      const removed: ObjectRecord[] = [];
      for (const target of ordered) {
        const current = await this.#selectObjectForUpdate(tx, bucketId, target.key);
        if (!current || current.version !== target.version) continue;
        await tx.run('DELETE FROM r2_objects WHERE bucket_id = ? AND key = ?', [bucketId, target.key]);
        removed.push(current);
      }
      return removed;
    });
    if (removed.length > 0) await this.#db.durable();
    return removed;
  }

  async setObjectStorageClass(
    bucketId: string,
    targets: readonly { key: string; version: string }[],
    storageClass: StorageClass,
  ): Promise<number> {
    return this.#db.transaction(async (tx) => {
      let changed = 0;
      for (const target of targets) {
        const result = await tx.run(
          'UPDATE r2_objects SET storage_class = ? WHERE bucket_id = ? AND key = ? AND version = ?',
          [storageClass, bucketId, target.key, target.version],
        );
        changed += result.changes;
      }
      return changed;
    });
  }

  async bucketUploadsCreatedBefore(
    bucketId: string,
    prefix: string,
    time: number,
    limit: number,
  ): Promise<UploadRecord[]> {
    const upper = prefix === '' ? null : prefixUpperBound(prefix);
    const rows = await this.#db.all<UploadRow>(
      `SELECT * FROM r2_uploads WHERE bucket_id = ? AND created_at < ? AND key >= ? AND (CAST(? AS TEXT) IS NULL OR key < ?)
       ORDER BY created_at LIMIT ?`,
      [bucketId, time, prefix, upper, upper, limit],
    );
    return rows.map(toUpload);
  }

  async uploadsCreatedBefore(time: number, limit: number): Promise<UploadRecord[]> {
    const rows = await this.#db.all<UploadRow>(
      'SELECT * FROM r2_uploads WHERE created_at < ? ORDER BY created_at LIMIT ?',
      [time, limit],
    );
    return rows.map(toUpload);
  }

  async referencedBlobIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    // Paged by primary key, so memory stays bounded however many objects there are.
    let after: [string, string] = ['', ''];
    for (;;) {
      const rows = await this.#db.all<{ bucket_id: string; key: string; segments: string }>(
        `SELECT bucket_id, key, segments FROM r2_objects WHERE bucket_id > ? OR (bucket_id = ? AND key > ?)
         ORDER BY bucket_id, key LIMIT ?`,
        [after[0], after[0], after[1], SCAN_PAGE],
      );
      for (const row of rows) {
        for (const segment of JSON.parse(row.segments) as [string, number][]) ids.add(segment[0]);
      }
      if (rows.length < SCAN_PAGE) break;
      const last = rows[rows.length - 1]!;
      after = [last.bucket_id, last.key];
    }
    for (const row of await this.#db.all<{ blob_id: string }>('SELECT blob_id FROM r2_parts')) ids.add(row.blob_id);
    return ids;
  }

  #storable(key: string): boolean {
    return !this.#nulFree || !key.includes('\0');
  }

  /** A key this backend cannot store is refused as an invalid name (10020), never a 500. */
  #assertStorable(key: string): void {
    if (!this.#storable(key)) throw R2Errors.invalidObjectName();
  }

  /** Whether the bucket exists, locked against its deletion until this transaction ends. */
  async #shareBucket(tx: SqlTransaction, bucketId: string): Promise<boolean> {
    return (await tx.get(`SELECT 1 AS one FROM r2_buckets WHERE id = ?${this.#forShare}`, [bucketId])) !== undefined;
  }

  /**
   * The current object of a key, with the key locked until this transaction ends: an advisory lock (the
   * row may not exist yet: two creators of one key with If-None-Match: *) and the row itself (deleters).
   */
  async #lockObject(tx: SqlTransaction, bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    await tx.lock(`r2:object:${bucketId}:${key}`);
    return this.#selectObjectForUpdate(tx, bucketId, key);
  }

  async #selectObjectForUpdate(tx: SqlExecutor, bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    const row = await tx.get<ObjectRow>(`SELECT * FROM r2_objects WHERE bucket_id = ? AND key = ?${this.#forUpdate}`, [
      bucketId,
      key,
    ]);
    return row && toObject(row);
  }
}

async function selectUpload(
  db: SqlExecutor,
  bucketId: string,
  uploadId: string,
  lock: string,
): Promise<UploadRecord | undefined> {
  const row = await db.get<UploadRow>(`SELECT * FROM r2_uploads WHERE upload_id = ? AND bucket_id = ?${lock}`, [
    uploadId,
    bucketId,
  ]);
  return row && toUpload(row);
}

async function partsOf(tx: SqlExecutor, uploadId: string): Promise<PartRecord[]> {
  const rows = await tx.all<PartRow>('SELECT * FROM r2_parts WHERE upload_id = ? ORDER BY part_number', [uploadId]);
  return rows.map(toPart);
}

/** Drops the upload (its parts cascade) and remembers that it existed; inside the caller's transaction. */
async function finishUpload(tx: SqlExecutor, upload: UploadRecord, finishedAt: number): Promise<void> {
  await tx.run('DELETE FROM r2_uploads WHERE upload_id = ?', [upload.uploadId]);
  await tx.run(
    `INSERT INTO r2_finished_uploads (upload_id, bucket_id, key, finished_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (upload_id) DO UPDATE SET
       bucket_id = excluded.bucket_id, key = excluded.key, finished_at = excluded.finished_at`,
    [upload.uploadId, upload.bucketId, upload.key, finishedAt],
  );
}

async function upsertObject(tx: SqlExecutor, o: ObjectRecord): Promise<void> {
  await tx.run(
    `INSERT INTO r2_objects (bucket_id, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, segments, inline_body, ssec, inline_iv)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (bucket_id, key) DO UPDATE SET
       version = excluded.version, size = excluded.size, etag = excluded.etag, uploaded = excluded.uploaded,
       http_metadata = excluded.http_metadata, custom_metadata = excluded.custom_metadata,
       checksums = excluded.checksums, storage_class = excluded.storage_class, segments = excluded.segments,
       inline_body = excluded.inline_body, ssec = excluded.ssec, inline_iv = excluded.inline_iv`,
    [
      o.bucketId,
      o.key,
      o.version,
      o.size,
      o.etag,
      o.uploaded,
      JSON.stringify(o.httpMetadata),
      JSON.stringify(o.customMetadata),
      JSON.stringify(o.checksums),
      o.storageClass,
      segmentsJson(o.segments),
      o.inlineBody ?? null,
      o.ssec ? JSON.stringify(o.ssec) : null,
      o.inlineIv ?? null,
    ],
  );
}

/** Compares keys as the database orders them: by their UTF-8 bytes. */
function bytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
