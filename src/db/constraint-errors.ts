/**
 * Whether `error` is a unique-constraint violation from either dialect: the last line of defence when
 * two writers race for one name, which a store maps to the right v4 error instead of a 500.
 * PostgreSQL reports SQLSTATE 23505; node:sqlite reports `UNIQUE constraint failed: <table>.<column>`.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ((error as { code?: unknown }).code === '23505') return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && message.includes('UNIQUE constraint failed');
}
