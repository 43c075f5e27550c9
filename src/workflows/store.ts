import type { SqlDatabase } from '../db/index.ts';
import type { WorkflowRecord } from './schemas.ts';

const COLUMNS = 'id, account_id, name, script_name, class_name, step_limit, created_on, modified_on';

/** The records of Workflows, in either dialect. */
export class SqlWorkflowStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** Registers the Workflow, or moves it to another Worker or class (a Workflow name is unique per account). */
  async upsert(record: WorkflowRecord): Promise<WorkflowRecord> {
    await this.#db.run(
      `INSERT INTO workflows (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, name) DO UPDATE SET script_name = excluded.script_name,
         class_name = excluded.class_name, step_limit = excluded.step_limit, modified_on = excluded.modified_on`,
      [
        record.id,
        record.account_id,
        record.name,
        record.script_name,
        record.class_name,
        record.step_limit,
        record.created_on,
        record.modified_on,
      ],
    );
    return (await this.find(record.account_id, record.name))!;
  }

  /** By name, within one account only. */
  async find(accountId: string, name: string): Promise<WorkflowRecord | undefined> {
    const row = await this.#db.get<WorkflowRecord>(
      `SELECT ${COLUMNS} FROM workflows WHERE account_id = ? AND name = ?`,
      [accountId, name],
    );
    return row && { ...row, step_limit: row.step_limit === null ? null : Number(row.step_limit) };
  }

  async list(
    accountId: string,
    query: { search?: string | undefined; offset: number; limit: number },
  ): Promise<{ workflows: WorkflowRecord[]; total: number }> {
    const where = query.search ? 'account_id = ? AND name LIKE ?' : 'account_id = ?';
    const params = query.search ? [accountId, `%${query.search.replace(/[%_\\]/g, '')}%`] : [accountId];
    const total = await this.#db.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM workflows WHERE ${where}`,
      params,
    );
    const workflows = await this.#db.all<WorkflowRecord>(
      `SELECT ${COLUMNS} FROM workflows WHERE ${where} ORDER BY name LIMIT ? OFFSET ?`,
      [...params, query.limit, query.offset],
    );
    return { workflows, total: Number(total?.n ?? 0) };
  }

  async delete(accountId: string, name: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM workflows WHERE account_id = ? AND name = ?', [accountId, name])).changes > 0
    );
  }

  /** Every Workflow of every account (the dashboard's overview reads one account's). */
  async all(accountId: string): Promise<WorkflowRecord[]> {
    return this.#db.all<WorkflowRecord>(`SELECT ${COLUMNS} FROM workflows WHERE account_id = ? ORDER BY name`, [
      accountId,
    ]);
  }
}
