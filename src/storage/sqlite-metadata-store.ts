import type { Database } from '../db/index.ts';
import type {
  BucketDeleteResult,
  BucketListQuery,
  CommitResult,
  CompleteResult,
  MetadataStore,
  ObjectListQuery,
  PartResult,
} from './metadata-store.ts';
import { prefixUpperBound } from './keys.ts';
import {
  OBJECT_METADATA_COLUMNS,
  toBucket,
  toObject,
  toPart,
  toUpload,
  type BucketRow,
  type ObjectRow,
  type PartRow,
  type UploadRow,
} from './sqlite-rows.ts';
import type { LifecycleRule } from './lifecycle-rules.ts';
import type { BucketRecord, ObjectRecord, PartRecord, StorageClass, UploadRecord } from './types.ts';

/** The embedded MetadataStore on SQLite (node:sqlite, WAL). */
export class SqliteMetadataStore implements MetadataStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async createBucket(bucket: BucketRecord): Promise<boolean> {
    const result = this.#db.run(
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

  async getBucket(accountId: string, name: string): Promise<BucketRecord | undefined> {
    const row = this.#db.get<BucketRow>('SELECT * FROM r2_buckets WHERE account_id = ? AND name = ?', [
      accountId,
      name,
    ]);
    return row && toBucket(row);
  }

  async listBuckets(accountId: string, query: BucketListQuery): Promise<BucketRecord[]> {
    const asc = query.direction === 'asc';
    const rows = this.#db.all<BucketRow>(
      `SELECT * FROM r2_buckets
       WHERE account_id = ? AND (? IS NULL OR name ${asc ? '>' : '<'} ?) AND (? IS NULL OR instr(name, ?) > 0)
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
      this.#db.run('UPDATE r2_buckets SET storage_class = ? WHERE account_id = ? AND name = ?', [
        patch.storageClass,
        accountId,
        name,
      ]);
    }
    return this.getBucket(accountId, name);
  }

  async deleteBucket(accountId: string, name: string): Promise<BucketDeleteResult> {
    return this.#db.transaction((): BucketDeleteResult => {
      const bucket = this.#db.get<{ id: string }>('SELECT id FROM r2_buckets WHERE account_id = ? AND name = ?', [
        accountId,
        name,
      ]);
      if (!bucket) return { status: 'missing' };
      if (this.#db.get('SELECT 1 FROM r2_objects WHERE bucket_id = ? LIMIT 1', [bucket.id]))
        return { status: 'not-empty' };
      const parts = this.#db.all<PartRow>(
        'SELECT p.* FROM r2_parts p JOIN r2_uploads u ON u.upload_id = p.upload_id WHERE u.bucket_id = ?',
        [bucket.id],
      );
      this.#db.run('DELETE FROM r2_buckets WHERE id = ?', [bucket.id]);
      return { status: 'deleted', discardedParts: parts.map(toPart) };
    });
  }

  async getObject(bucketId: string, key: string): Promise<ObjectRecord | undefined> {
    return this.#getObject(bucketId, key);
  }

  async commitObject(
    object: ObjectRecord,
    precondition?: (current: ObjectRecord | undefined) => boolean,
  ): Promise<CommitResult> {
    const result = this.#db.transaction((): CommitResult => {
      if (!this.#db.get('SELECT 1 FROM r2_buckets WHERE id = ?', [object.bucketId])) return { status: 'no-bucket' };
      const current = this.#getObject(object.bucketId, object.key);
      if (precondition && !precondition(current)) return { status: 'precondition-failed', current };
      this.#upsertObject(object);
      return { status: 'committed', replaced: current };
    });
    if (result.status === 'committed') await this.#db.durable();
    return result;
  }

  async deleteObjects(bucketId: string, keys: readonly string[]): Promise<ObjectRecord[]> {
    const removed = this.#db.transaction(() => {
      const removed: ObjectRecord[] = [];
      for (const key of new Set(keys)) {
        const current = this.#getObject(bucketId, key);
        if (!current) continue;
        this.#db.run('DELETE FROM r2_objects WHERE bucket_id = ? AND key = ?', [bucketId, key]);
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
    const rows = this.#db.all<ObjectRow>(
      `SELECT ${OBJECT_METADATA_COLUMNS} FROM r2_objects
       WHERE bucket_id = ? AND key >= ? AND (? IS NULL OR key < ?)
         AND (? IS NULL OR key > ?) AND (? IS NULL OR key >= ?)
       ORDER BY key LIMIT ?`,
      [
        bucketId,
        prefix,
        upper,
        upper,
        query.startAfter ?? null,
        query.startAfter ?? null,
        query.startAt ?? null,
        query.startAt ?? null,
        query.limit,
      ],
    );
    return rows.map(toObject);
  }

  async createUpload(upload: UploadRecord): Promise<boolean> {
    return this.#db.transaction(() => {
      if (!this.#db.get('SELECT 1 FROM r2_buckets WHERE id = ?', [upload.bucketId])) return false;
      this.#db.run(
        `INSERT INTO r2_uploads (upload_id, bucket_id, key, created_at, http_metadata, custom_metadata, storage_class)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [
          upload.uploadId,
          upload.bucketId,
          upload.key,
          upload.createdAt,
          JSON.stringify(upload.httpMetadata),
          JSON.stringify(upload.customMetadata),
          upload.storageClass,
        ],
      );
      return true;
    });
  }

  async getUpload(bucketId: string, uploadId: string): Promise<UploadRecord | undefined> {
    return this.#getUpload(bucketId, uploadId);
  }

  async putPart(bucketId: string, part: PartRecord): Promise<PartResult> {
    const result = this.#db.transaction((): PartResult => {
      if (!this.#getUpload(bucketId, part.uploadId)) return { status: 'no-upload' };
      const replaced = this.#db.get<PartRow>('SELECT * FROM r2_parts WHERE upload_id = ? AND part_number = ?', [
        part.uploadId,
        part.partNumber,
      ]);
      this.#db.run(
        `INSERT INTO r2_parts (upload_id, part_number, blob_id, size, etag, uploaded_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (upload_id, part_number) DO UPDATE SET
           blob_id = excluded.blob_id, size = excluded.size, etag = excluded.etag, uploaded_at = excluded.uploaded_at`,
        [part.uploadId, part.partNumber, part.blobId, part.size, part.etag, part.uploadedAt],
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
    const result = this.#db.transaction((): CompleteResult => {
      const upload = this.#getUpload(bucketId, uploadId);
      if (!upload) return { status: 'no-upload' };
      const parts = this.#parts(uploadId);
      const object = build(upload, parts);
      const replaced = this.#getObject(bucketId, upload.key);
      this.#upsertObject(object);
      this.#finishUpload(upload);
      const used = new Set(object.segments.map((s) => s.blobId));
      return { status: 'completed', object, replaced, unusedParts: parts.filter((p) => !used.has(p.blobId)) };
    });
    if (result.status === 'completed') await this.#db.durable();
    return result;
  }

  async abortUpload(bucketId: string, uploadId: string): Promise<PartRecord[] | undefined> {
    return this.#db.transaction(() => {
      const upload = this.#getUpload(bucketId, uploadId);
      if (!upload) return undefined;
      const parts = this.#parts(uploadId);
      this.#finishUpload(upload);
      return parts;
    });
  }

  async finishedUploadKey(bucketId: string, uploadId: string): Promise<string | undefined> {
    return this.#db.get<{ key: string }>('SELECT key FROM r2_finished_uploads WHERE upload_id = ? AND bucket_id = ?', [
      uploadId,
      bucketId,
    ])?.key;
  }

  async forgetFinishedUploads(time: number): Promise<number> {
    return this.#db.run('DELETE FROM r2_finished_uploads WHERE finished_at < ?', [time]).changes;
  }

  async getLifecycle(bucketId: string): Promise<LifecycleRule[]> {
    const row = this.#db.get<{ rules: string }>('SELECT rules FROM r2_bucket_lifecycle WHERE bucket_id = ?', [
      bucketId,
    ]);
    return row ? (JSON.parse(row.rules) as LifecycleRule[]) : [];
  }

  async putLifecycle(bucketId: string, rules: readonly LifecycleRule[]): Promise<boolean> {
    return this.#db.transaction(() => {
      if (!this.#db.get('SELECT 1 FROM r2_buckets WHERE id = ?', [bucketId])) return false;
      this.#db.run(
        `INSERT INTO r2_bucket_lifecycle (bucket_id, rules, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (bucket_id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
        [bucketId, JSON.stringify(rules), Date.now()],
      );
      return true;
    });
  }

  async bucketsWithLifecycle(): Promise<{ bucket: BucketRecord; rules: LifecycleRule[] }[]> {
    return this.#db
      .all<BucketRow & { rules: string }>(
        `SELECT b.*, l.rules FROM r2_buckets b JOIN r2_bucket_lifecycle l ON l.bucket_id = b.id
         WHERE l.rules <> '[]' ORDER BY b.id`,
      )
      .map((row) => ({ bucket: toBucket(row), rules: JSON.parse(row.rules) as LifecycleRule[] }));
  }

  async deleteObjectVersions(
    bucketId: string,
    targets: readonly { key: string; version: string }[],
  ): Promise<ObjectRecord[]> {
    const removed = this.#db.transaction(() => {
      const removed: ObjectRecord[] = [];
      for (const target of targets) {
        const current = this.#getObject(bucketId, target.key);
        if (!current || current.version !== target.version) continue;
        this.#db.run('DELETE FROM r2_objects WHERE bucket_id = ? AND key = ?', [bucketId, target.key]);
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
    return this.#db.transaction(() => {
      let changed = 0;
      for (const target of targets) {
        changed += Number(
          this.#db.run('UPDATE r2_objects SET storage_class = ? WHERE bucket_id = ? AND key = ? AND version = ?', [
            storageClass,
            bucketId,
            target.key,
            target.version,
          ]).changes,
        );
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
    return this.#db
      .all<UploadRow>(
        `SELECT * FROM r2_uploads WHERE bucket_id = ? AND created_at < ? AND key >= ? AND (? IS NULL OR key < ?)
         ORDER BY created_at LIMIT ?`,
        [bucketId, time, prefix, upper, upper, limit],
      )
      .map(toUpload);
  }

  async uploadsCreatedBefore(time: number, limit: number): Promise<UploadRecord[]> {
    return this.#db
      .all<UploadRow>('SELECT * FROM r2_uploads WHERE created_at < ? ORDER BY created_at LIMIT ?', [time, limit])
      .map(toUpload);
  }

  async referencedBlobIds(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const row of this.#db.iterate<{ segments: string }>('SELECT segments FROM r2_objects')) {
      for (const segment of JSON.parse(row.segments) as [string, number][]) ids.add(segment[0]);
    }
    for (const row of this.#db.iterate<{ blob_id: string }>('SELECT blob_id FROM r2_parts')) ids.add(row.blob_id);
    return ids;
  }

  #getObject(bucketId: string, key: string): ObjectRecord | undefined {
    const row = this.#db.get<ObjectRow>('SELECT * FROM r2_objects WHERE bucket_id = ? AND key = ?', [bucketId, key]);
    return row && toObject(row);
  }

  #getUpload(bucketId: string, uploadId: string): UploadRecord | undefined {
    const row = this.#db.get<UploadRow>('SELECT * FROM r2_uploads WHERE upload_id = ? AND bucket_id = ?', [
      uploadId,
      bucketId,
    ]);
    return row && toUpload(row);
  }

  /** Drops the upload (its parts cascade) and remembers that it existed; inside the caller's transaction. */
  #finishUpload(upload: UploadRecord): void {
    this.#db.run('DELETE FROM r2_uploads WHERE upload_id = ?', [upload.uploadId]);
    this.#db.run(
      'INSERT OR REPLACE INTO r2_finished_uploads (upload_id, bucket_id, key, finished_at) VALUES (?, ?, ?, ?)',
      [upload.uploadId, upload.bucketId, upload.key, Date.now()],
    );
  }

  #parts(uploadId: string): PartRecord[] {
    return this.#db
      .all<PartRow>('SELECT * FROM r2_parts WHERE upload_id = ? ORDER BY part_number', [uploadId])
      .map(toPart);
  }

  #upsertObject(o: ObjectRecord): void {
    this.#db.run(
      `INSERT INTO r2_objects (bucket_id, key, version, size, etag, uploaded, http_metadata, custom_metadata, checksums, storage_class, segments, inline_body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (bucket_id, key) DO UPDATE SET
         version = excluded.version, size = excluded.size, etag = excluded.etag, uploaded = excluded.uploaded,
         http_metadata = excluded.http_metadata, custom_metadata = excluded.custom_metadata,
         checksums = excluded.checksums, storage_class = excluded.storage_class, segments = excluded.segments,
         inline_body = excluded.inline_body`,
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
        JSON.stringify(o.segments.map((s) => [s.blobId, s.size])),
        o.inlineBody ?? null,
      ],
    );
  }
}
