import type { SchemaMigration } from '../db/index.ts';

/**
 * storage/0001_initial on PostgreSQL: keys and names compare byte-wise (`COLLATE "C"`, as SQLite's
 * BINARY on UTF-8), so listings page in the same order on both; sizes and ms times are BIGINT.
 */
const POSTGRES_INITIAL = `
  CREATE TABLE r2_buckets (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    location TEXT NOT NULL,
    storage_class TEXT NOT NULL,
    jurisdiction TEXT NOT NULL,
    UNIQUE (account_id, name)
  );
  CREATE TABLE r2_objects (
    bucket_id TEXT NOT NULL REFERENCES r2_buckets(id),
    key TEXT COLLATE "C" NOT NULL,
    version TEXT NOT NULL,
    size BIGINT NOT NULL,
    etag TEXT NOT NULL,
    uploaded BIGINT NOT NULL,
    http_metadata TEXT NOT NULL,
    custom_metadata TEXT NOT NULL,
    checksums TEXT NOT NULL,
    storage_class TEXT NOT NULL,
    segments TEXT NOT NULL,
    PRIMARY KEY (bucket_id, key)
  );
  CREATE TABLE r2_uploads (
    upload_id TEXT PRIMARY KEY,
    bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
    key TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    http_metadata TEXT NOT NULL,
    custom_metadata TEXT NOT NULL,
    storage_class TEXT NOT NULL
  );
  CREATE INDEX r2_uploads_created ON r2_uploads(created_at);
  CREATE TABLE r2_parts (
    upload_id TEXT NOT NULL REFERENCES r2_uploads(upload_id) ON DELETE CASCADE,
    part_number BIGINT NOT NULL,
    blob_id TEXT NOT NULL,
    size BIGINT NOT NULL,
    etag TEXT NOT NULL,
    uploaded_at BIGINT NOT NULL,
    PRIMARY KEY (upload_id, part_number)
  );
`;

/**
 * Object storage schema. Plain SQL that PostgreSQL can mirror: JSON documents are TEXT here (jsonb
 * there), times are integer milliseconds, and ordering relies on byte-wise key comparison (SQLite's
 * BINARY collation on UTF-8, `COLLATE "C"` in PostgreSQL).
 */
export const storageMigrations: readonly SchemaMigration[] = [
  {
    id: 'storage/0001_initial',
    sql: {
      sqlite: `
      CREATE TABLE r2_buckets (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        location TEXT NOT NULL,
        storage_class TEXT NOT NULL,
        jurisdiction TEXT NOT NULL,
        UNIQUE (account_id, name)
      );
      CREATE TABLE r2_objects (
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id),
        key TEXT NOT NULL,
        version TEXT NOT NULL,
        size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        uploaded INTEGER NOT NULL,
        http_metadata TEXT NOT NULL,
        custom_metadata TEXT NOT NULL,
        checksums TEXT NOT NULL,
        storage_class TEXT NOT NULL,
        segments TEXT NOT NULL,
        PRIMARY KEY (bucket_id, key)
      );
      CREATE TABLE r2_uploads (
        upload_id TEXT PRIMARY KEY,
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        http_metadata TEXT NOT NULL,
        custom_metadata TEXT NOT NULL,
        storage_class TEXT NOT NULL
      );
      CREATE INDEX r2_uploads_created ON r2_uploads(created_at);
      CREATE TABLE r2_parts (
        upload_id TEXT NOT NULL REFERENCES r2_uploads(upload_id) ON DELETE CASCADE,
        part_number INTEGER NOT NULL,
        blob_id TEXT NOT NULL,
        size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        uploaded_at INTEGER NOT NULL,
        PRIMARY KEY (upload_id, part_number)
      );
    `,
      postgres: POSTGRES_INITIAL,
    },
  },
  {
    // Small objects keep their bytes in the row (NULL: the bytes are in the blobs of `segments`).
    id: 'storage/0002_inline_bodies',
    sql: {
      sqlite: `ALTER TABLE r2_objects ADD COLUMN inline_body BLOB;`,
      postgres: 'ALTER TABLE r2_objects ADD COLUMN inline_body BYTEA;',
    },
  },
  {
    // Completed and aborted uploads are remembered (for the upload TTL): R2 answers a finished upload
    // differently from one it never had (complete: NoSuchUpload vs InternalError; abort: success).
    id: 'storage/0003_finished_uploads',
    sql: {
      sqlite: `
      CREATE TABLE r2_finished_uploads (
        upload_id TEXT PRIMARY KEY,
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        finished_at INTEGER NOT NULL
      );
      CREATE INDEX r2_finished_uploads_finished ON r2_finished_uploads(finished_at);
    `,
      postgres: `
      CREATE TABLE r2_finished_uploads (
        upload_id TEXT PRIMARY KEY,
        bucket_id TEXT NOT NULL REFERENCES r2_buckets(id) ON DELETE CASCADE,
        key TEXT COLLATE "C" NOT NULL,
        finished_at BIGINT NOT NULL
      );
      CREATE INDEX r2_finished_uploads_finished ON r2_finished_uploads(finished_at);
    `,
    },
  },
  {
    // A bucket's lifecycle rules as one JSON document (the API replaces the whole set at once).
    id: 'storage/0004_lifecycle',
    sql: {
      sqlite: `
      CREATE TABLE r2_bucket_lifecycle (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        rules TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
      postgres: `
      CREATE TABLE r2_bucket_lifecycle (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        rules TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
    },
  },
  {
    // A bucket's CORS rules as one JSON document (the /cors API and S3's PutBucketCors replace the whole set).
    id: 'storage/0005_bucket_cors',
    sql: {
      sqlite: `
      CREATE TABLE r2_bucket_cors (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        rules TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
      postgres: `
      CREATE TABLE r2_bucket_cors (
        bucket_id TEXT PRIMARY KEY REFERENCES r2_buckets(id) ON DELETE CASCADE,
        rules TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
    },
  },
  {
    // A part's etag is a random id per upload (as R2's): its md5, which the object's etag is made from, is
    // kept apart. Parts stored before had their md5 as etag.
    id: 'storage/0006_part_md5',
    sql: {
      sqlite: `ALTER TABLE r2_parts ADD COLUMN md5 TEXT; UPDATE r2_parts SET md5 = etag;`,
      postgres: `ALTER TABLE r2_parts ADD COLUMN md5 TEXT; UPDATE r2_parts SET md5 = etag;`,
    },
  },
  {
    // SSE-C (ssec.ts): an encrypted object's or upload's key check (JSON, never the key), the IV of an
    // encrypted inline body, and each part's IV (an object's blobs carry theirs in its segments JSON).
    id: 'storage/0007_ssec',
    sql: {
      sqlite: `ALTER TABLE r2_objects ADD COLUMN ssec TEXT; ALTER TABLE r2_objects ADD COLUMN inline_iv TEXT;
        ALTER TABLE r2_uploads ADD COLUMN ssec TEXT; ALTER TABLE r2_parts ADD COLUMN iv TEXT;`,
      postgres: `ALTER TABLE r2_objects ADD COLUMN ssec TEXT; ALTER TABLE r2_objects ADD COLUMN inline_iv TEXT;
        ALTER TABLE r2_uploads ADD COLUMN ssec TEXT; ALTER TABLE r2_parts ADD COLUMN iv TEXT;`,
    },
  },
];
