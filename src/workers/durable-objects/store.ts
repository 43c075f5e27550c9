import { fromSqlBool, toSqlBool, type SqlDatabase, type SqlExecutor } from '../../db/index.ts';
import { DurableObjectErrors } from './errors.ts';
import type { NamespaceRecord } from './schemas.ts';

interface NamespaceRow {
  id: string;
  account_id: string;
  script_name: string;
  class_name: string;
  use_sqlite: number | boolean;
  created_on: string;
}

const toRecord = (row: NamespaceRow): NamespaceRecord => ({ ...row, use_sqlite: fromSqlBool(row.use_sqlite) });

/** A script's Durable Object state as one upload sees it: its migration tag and its classes. */
export interface ScriptClasses {
  tag: string | null;
  classes: NamespaceRecord[];
}

/** Durable Object namespaces (`worker_do_namespaces`) and scripts' migration tags (`worker_scripts.migration_tag`). */
export class DurableObjectNamespaceStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async forScript(accountId: string, script: string): Promise<ScriptClasses> {
    const row = await this.#db.get<{ migration_tag: string | null }>(
      'SELECT migration_tag FROM worker_scripts WHERE account_id = ? AND name = ?',
      [accountId, script],
    );
    const rows = await this.#db.all<NamespaceRow>(
      'SELECT * FROM worker_do_namespaces WHERE account_id = ? AND script_name = ? ORDER BY class_name',
      [accountId, script],
    );
    return { tag: row?.migration_tag ?? null, classes: rows.map(toRecord) };
  }

  async forAccount(accountId: string): Promise<NamespaceRecord[]> {
    const rows = await this.#db.all<NamespaceRow>(
      'SELECT * FROM worker_do_namespaces WHERE account_id = ? ORDER BY script_name, class_name',
      [accountId],
    );
    return rows.map(toRecord);
  }

  async get(accountId: string, id: string): Promise<NamespaceRecord | undefined> {
    const row = await this.#db.get<NamespaceRow>('SELECT * FROM worker_do_namespaces WHERE account_id = ? AND id = ?', [
      accountId,
      id,
    ]);
    return row && toRecord(row);
  }

  /** Every namespace, grouped by `<account>/<script>` (what the runtime loads). */
  async all(): Promise<Map<string, NamespaceRecord[]>> {
    const rows = await this.#db.all<NamespaceRow>('SELECT * FROM worker_do_namespaces ORDER BY class_name');
    const out = new Map<string, NamespaceRecord[]>();
    for (const row of rows) {
      const key = `${row.account_id}/${row.script_name}`;
      out.set(key, [...(out.get(key) ?? []), toRecord(row)]);
    }
    return out;
  }

  /** Puts back a script's tag and classes (and the classes it took from other scripts) after a failed deploy. */
  async restore(accountId: string, script: string, previous: ScriptClasses, takenFrom: NamespaceRecord[]) {
    await this.#db.transaction((tx) => writeScriptClasses(tx, accountId, script, previous, takenFrom));
  }
}

/**
 * Writes a script's migration tag and classes in the caller's transaction: its rows become exactly
 * `state.classes` (a class transferred from another script moves its row), plus `restored` rows as they were.
 */
export async function writeScriptClasses(
  tx: SqlExecutor,
  accountId: string,
  script: string,
  state: ScriptClasses & { previousTag?: string | null },
  restored: NamespaceRecord[] = [],
): Promise<void> {
  if (state.previousTag !== undefined) {
    // The tag the migrations were checked against must still be the script's (two uploads at once: one wins).
    const row = await tx.get<{ migration_tag: string | null }>(
      'SELECT migration_tag FROM worker_scripts WHERE account_id = ? AND name = ?',
      [accountId, script],
    );
    const current = row?.migration_tag ?? null;
    if (current !== state.previousTag) throw DurableObjectErrors.tagPrecondition(current);
  }
  await tx.run('UPDATE worker_scripts SET migration_tag = ? WHERE account_id = ? AND name = ?', [
    state.tag,
    accountId,
    script,
  ]);
  await tx.run('DELETE FROM worker_do_namespaces WHERE account_id = ? AND script_name = ?', [accountId, script]);
  for (const record of [...state.classes, ...restored]) {
    await tx.run('DELETE FROM worker_do_namespaces WHERE id = ?', [record.id]);
    await tx.run(
      `INSERT INTO worker_do_namespaces (id, account_id, script_name, class_name, use_sqlite, created_on)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [record.id, accountId, record.script_name, record.class_name, toSqlBool(record.use_sqlite), record.created_on],
    );
  }
}
