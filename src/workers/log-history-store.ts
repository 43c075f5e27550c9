import type { SqlDatabase } from '../db/index.ts';
import type { FunctionLogLine } from './runtime/log-hub.ts';

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

  /** The last `count` lines of a script, oldest first. */
  async recent(accountId: string, script: string, count: number): Promise<FunctionLogLine[]> {
    const rows = await this.#db.all<LogRow>(
      `SELECT time, level, message FROM worker_log_lines WHERE account_id = ? AND script_name = ?
       ORDER BY id DESC LIMIT ?`,
      [accountId, script, count],
    );
    return rows
      .reverse()
      .map((row) => ({ time: row.time, level: row.level, message: JSON.parse(row.message) as string[] }));
  }

  /** Forgets lines written before `time` (ISO 8601); returns how many. */
  async pruneBefore(time: string): Promise<number> {
    return (await this.#db.run('DELETE FROM worker_log_lines WHERE time < ?', [time])).changes;
  }
}
