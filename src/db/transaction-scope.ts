import type { SqlDatabase, SqlTransaction } from './sql.ts';

/**
 * An open transaction plus work to do once it has committed. A consumer that writes rows in a producer's
 * transaction (the notification outbox, in a health transition's) and wants to act on them in memory
 * registers `afterCommit`: the callback runs only if the transaction committed, never for a rollback.
 */
export interface TransactionScope {
  readonly tx: SqlTransaction;
  afterCommit(callback: () => void): void;
}

/** Runs `fn` in one transaction of `db`; the scope's after-commit callbacks run once it has committed. */
export async function inTransactionScope<T>(db: SqlDatabase, fn: (scope: TransactionScope) => Promise<T>): Promise<T> {
  const callbacks: (() => void)[] = [];
  const result = await db.transaction((tx) => fn({ tx, afterCommit: (callback) => void callbacks.push(callback) }));
  for (const callback of callbacks) callback();
  return result;
}
