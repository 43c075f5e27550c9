/**
 * Recognises constraint violations of both dialects, so a store can map the loser of a race to a client
 * error: SQLite says it in the message, PostgreSQL in the error's SQLSTATE code (23505 unique, 23503
 * foreign key) and constraint name.
 */
export function isUniqueViolation(error: unknown, sqliteColumns: string, postgresConstraint: string): boolean {
  const {
    code,
    constraint_name: constraint,
    message,
  } = error as { code?: string; constraint_name?: string; message?: string };
  if (code === '23505') return constraint === postgresConstraint;
  return message?.includes(`UNIQUE constraint failed: ${sqliteColumns}`) ?? false;
}

export function isForeignKeyViolation(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '23503' || (message?.includes('FOREIGN KEY constraint failed') ?? false);
}
