import type { SqlDatabase } from '../../db/index.ts';

/** Finished preview results, kept under their preview id (see preview.ts). */
export interface PreviewStore {
  save(accountId: string, id: string, result: string, createdOn: string): Promise<void>;
  /** The stored result (JSON), or undefined when the account has no such preview. */
  get(accountId: string, id: string): Promise<string | undefined>;
}

export class SqlPreviewStore implements PreviewStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async save(accountId: string, id: string, result: string, createdOn: string): Promise<void> {
    await this.#db.run('INSERT INTO lb_previews (id, account_id, result, created_on) VALUES (?, ?, ?, ?)', [
      id,
      accountId,
      result,
      createdOn,
    ]);
  }

  async get(accountId: string, id: string): Promise<string | undefined> {
    const row = await this.#db.get<{ result: string }>(
      'SELECT result FROM lb_previews WHERE account_id = ? AND id = ?',
      [accountId, id],
    );
    return row?.result;
  }
}
