import type { D1DatabaseRecord, StatementResult } from './schemas.ts';

/** A database as the list answers it (the SDK's DatabaseListResponse). */
export function renderListed(database: D1DatabaseRecord) {
  return {
    uuid: database.uuid,
    name: database.name,
    created_at: database.created_at,
    version: 'production',
    jurisdiction: database.jurisdiction,
  };
}

/** A database with its figures (the SDK's D1): one copy, so read replication is always "disabled". */
export function renderDatabase(database: D1DatabaseRecord, stats?: { num_tables: number; file_size: number }) {
  return {
    ...renderListed(database),
    ...(stats ?? {}),
    read_replication: { mode: 'disabled' as const },
  };
}

/** `query`: each statement's rows as objects by column name. */
export function renderQueryResult(result: StatementResult) {
  return {
    results: result.rows.map((row) => Object.fromEntries(result.columns.map((column, i) => [column, row[i]]))),
    success: true,
    meta: result.meta,
  };
}

/** `raw`: each statement's columns and rows as arrays. */
export function renderRawResult(result: StatementResult) {
  return { results: { columns: result.columns, rows: result.rows }, success: true, meta: result.meta };
}
