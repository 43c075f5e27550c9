export { Database, toSqlBool, fromSqlBool, type SqlParams, type RunResult } from './database.ts';
export { migrate, type Migration } from './migrations.ts';
