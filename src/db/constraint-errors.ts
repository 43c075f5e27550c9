/**
 * Constraint violations of either dialect: the last line of defence when two writers race (for one name,
 * or for a row another is deleting), which a store maps to the right v4 error instead of a 500. PostgreSQL
 * says it in the error's SQLSTATE (23505 unique, 23503 foreign key) and constraint name; node:sqlite in
 * the message (`UNIQUE constraint failed: <table>.<column>, ...`, `FOREIGN KEY constraint failed`).
 */
interface DriverError {
  code?: unknown;
  constraint_name?: unknown;
  message?: unknown;
}

/**
 * Whether `error` is a unique-constraint violation; with `on`, only of that constraint (its columns as
 * SQLite names them, and its PostgreSQL constraint name).
 */
export function isUniqueViolation(error: unknown, on?: { sqliteColumns: string; postgresConstraint: string }): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint_name: constraint, message } = error as DriverError;
  if (code === '23505') return on === undefined || constraint === on.postgresConstraint;
  if (typeof message !== 'string') return false;
  return message.includes(
    on === undefined ? 'UNIQUE constraint failed' : `UNIQUE constraint failed: ${on.sqliteColumns}`,
  );
}

export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as DriverError;
  return code === '23503' || (typeof message === 'string' && message.includes('FOREIGN KEY constraint failed'));
}
