import { PostgresDatabase } from './postgres-database.ts';
import type { SqlDatabase } from './sql.ts';
import { SqliteDatabase } from './sqlite-database.ts';

/**
 * The database a server runs on: PostgreSQL when `databaseUrl` is a postgres:// URL
 * (`--database-url` / `LEDGE_DATABASE_URL`), else the embedded SQLite file at `sqlitePath`.
 */
export function openDatabase(databaseUrl: string | undefined, sqlitePath: string): SqlDatabase {
  if (databaseUrl === undefined || databaseUrl === '') return new SqliteDatabase(sqlitePath);
  if (!isPostgresUrl(databaseUrl))
    throw new Error(
      `unsupported database URL ${redactUrl(databaseUrl)}: expected postgres://user:password@host:port/db`,
    );
  return new PostgresDatabase(databaseUrl);
}

export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//i.test(url);

/** The URL without its password, for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
