import type { SqlDatabase } from '../db/index.ts';
import type { FunctionLogLine } from '../workerd/index.ts';

interface LogRow {
  time: string;
  level: string;
  message: string;
}

/**
 * Functions' console output kept in the shared database, for nodes that share one: `ledge tail --history`
 * on any node shows the lines every node's workerd wrote. (A lone node keeps them in its data dir's files.)
 */
export class SqlLogHistoryStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** One multi-row INSERT for a batch of lines. */
  async append(lines: ReadonlyArray<{ accountId: string; script: string; line: FunctionLogLine }>): Promise<void> {
    if (lines.length === 0) return;
    const values = lines.map(() => '(?, ?, ?, ?, ?)').join(', ');
    const params = lines.flatMap(({ accountId, script, line }) => [
      accountId,
      script,
      line.time,
      line.level,
      JSON.stringify(line.message),
    ]);
    await this.#db.run(
      `INSERT INTO worker_log_lines (account_id, script_name, time, level, message) VALUES ${values}`,
      params,
    );
  }

  /** The id where the last `count` lines of a script begin (0 when it has no more than that). */
  async firstIdOfLast(accountId: string, script: string, count: number): Promise<number> {
    const row = await this.#db.get<{ id: number | string }>(
      `SELECT id FROM worker_log_lines WHERE account_id = ? AND script_name = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
      [accountId, script, count - 1],
    );
    return row ? Number(row.id) : 0;
  }

  /**
   * Up to `limit` lines of a script from id `fromId` on, oldest first, each as the NDJSON line the history
   * route sends (the message column is already JSON), with the id to ask the next page from.
   */
  async page(
    accountId: string,
    script: string,
    fromId: number,
    limit: number,
  ): Promise<{ text: string; count: number; nextId: number }> {
    const rows = await this.#db.all<LogRow & { id: number | string }>(
      `SELECT id, time, level, message FROM worker_log_lines WHERE account_id = ? AND script_name = ? AND id >= ?
       ORDER BY id LIMIT ?`,
      [accountId, script, fromId, limit],
    );
    let text = '';
    for (const row of rows) {
      text += `{"time":${JSON.stringify(row.time)},"level":${JSON.stringify(row.level)},"message":${row.message}}\n`;
    }
    const last = rows.at(-1);
    return { text, count: rows.length, nextId: last ? Number(last.id) + 1 : fromId };
  }

  /** Forgets a script's lines older than its newest `keep`; returns how many. */
  async trim(accountId: string, script: string, keep: number): Promise<number> {
    const boundary = await this.firstIdOfLast(accountId, script, keep);
    if (boundary === 0) return 0;
    const result = await this.#db.run(
      'DELETE FROM worker_log_lines WHERE account_id = ? AND script_name = ? AND id < ?',
      [accountId, script, boundary],
    );
    return result.changes;
  }

  /** Forgets lines written before `time` (ISO 8601); returns how many. */
  async pruneBefore(time: string): Promise<number> {
    return (await this.#db.run('DELETE FROM worker_log_lines WHERE time < ?', [time])).changes;
  }
}
