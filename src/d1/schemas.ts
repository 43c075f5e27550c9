import { z } from 'zod';

export const JURISDICTIONS = ['eu', 'fedramp', 'us'] as const;
export const LOCATION_HINTS = ['wnam', 'enam', 'weur', 'eeur', 'apac', 'oc'] as const;

/** A database name: letters, digits, `-` and `_`; never a UUID, since routes take either. */
export const DATABASE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const REPLICATION_REFUSED = 'read_replication.mode "auto" is not available: a database has one copy here, its primary';

/** POST /d1/database (the SDK's DatabaseCreateParams; wrangler sends name, primary_location_hint, jurisdiction). */
export const DatabaseCreateSchema = z.object({
  name: z.string({ error: 'name is required and must be a string' }),
  primary_location_hint: z.enum(LOCATION_HINTS).optional(),
  jurisdiction: z.enum(JURISDICTIONS).optional(),
  // One copy, the primary: read replication has nothing to replicate to, so only "disabled" is taken.
  read_replication: z.object({ mode: z.literal('disabled', { error: REPLICATION_REFUSED }) }).optional(),
});

/**
 * PUT and PATCH of a database (the SDK's update and edit): read replication is all there is to change, and a
 * database here has one copy, so only "disabled" is taken.
 */
export const DatabaseUpdateSchema = z.object({
  read_replication: z.object({
    mode: z.literal('disabled', { error: REPLICATION_REFUSED }),
  }),
});
export const DatabaseEditSchema = DatabaseUpdateSchema.partial();

/** A value bound to `?`: SQLite's types, as the REST API and the binding send them (a blob as byte array). */
const Param = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.number().int().min(0).max(255))]);
export type QueryParam = z.infer<typeof Param>;

const Statement = z.object({
  sql: z.string({ error: 'sql is required and must be a string' }).min(1, 'sql must not be empty'),
  params: z.array(Param).optional(),
});

/** POST .../query and .../raw: one `sql` (several statements allowed), or a `batch` of them. */
export const QueryBodySchema = z.union([
  Statement.strict(),
  z.strictObject({ batch: z.array(Statement).min(1, 'batch must hold at least one statement') }),
]);
export type QueryBody = z.infer<typeof QueryBodySchema>;

/** POST .../import, as wrangler drives it: init (etag of the file), ingest (after the upload), poll. */
export const ImportBodySchema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('init'),
    etag: z.string().regex(/^[0-9a-f]{32}$/, 'etag must be the MD5 of the file, in hex'),
  }),
  z.object({
    action: z.literal('ingest'),
    etag: z.string().regex(/^[0-9a-f]{32}$/, 'etag must be the MD5 of the file, in hex'),
    filename: z.string().min(1),
  }),
  z.object({ action: z.literal('poll'), current_bookmark: z.string() }),
]);
export type ImportBody = z.infer<typeof ImportBodySchema>;

/** POST .../export (polling: the first call does the work, the answer says where to download it). */
export const ExportBodySchema = z.object({
  output_format: z.literal('polling'),
  current_bookmark: z.string().optional(),
  dump_options: z
    .object({
      no_data: z.boolean().optional(),
      no_schema: z.boolean().optional(),
      tables: z.array(z.string()).optional(),
      compatibility: z.string().optional(),
    })
    .optional(),
});
export type ExportBody = z.infer<typeof ExportBodySchema>;

/** A database as Ledge keeps it. */
export interface D1DatabaseRecord {
  uuid: string;
  account_id: string;
  name: string;
  jurisdiction: string | null;
  primary_location_hint: string | null;
  created_at: string;
}

/** One statement's answer from the engine (d1.js): rows as arrays under their columns. */
export interface StatementResult {
  columns: string[];
  rows: unknown[][];
  meta: StatementMeta;
}

export interface StatementMeta {
  served_by?: string;
  served_by_primary?: boolean;
  timings?: { sql_duration_ms: number };
  duration: number;
  changes: number;
  last_row_id: number;
  changed_db: boolean;
  size_after: number;
  rows_read: number;
  rows_written: number;
  [key: string]: unknown;
}
