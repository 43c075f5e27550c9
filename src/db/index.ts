export {
  dialects,
  fromSqlBool,
  toSqlBool,
  type Dialect,
  type DialectName,
  type RunResult,
  type SqlDatabase,
  type SqlExecutor,
  type SqlParams,
  type SqlTransaction,
  type SqlValue,
} from './sql.ts';
export { SqliteDatabase } from './sqlite-database.ts';
export { PostgresDatabase } from './postgres-database.ts';
export { applyMigrations, type SchemaMigration } from './schema-migrations.ts';
export { isForeignKeyViolation, isUniqueViolation } from './constraint-errors.ts';
export { openDatabase, isPostgresUrl, redactUrl } from './open.ts';
export { inTransactionScope, type TransactionScope } from './transaction-scope.ts';
export {
  foldOnConflict,
  HOUR_RETENTION_S,
  MINUTE_RETENTION_S,
  SAMPLE_RANGES,
  SampleRollup,
  type SampleRange,
  type SampleTable,
} from './minute-hour-samples.ts';
