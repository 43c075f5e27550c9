import type { SqlDatabase } from '../../db/index.ts';

export interface ScheduleRecord {
  account_id: string;
  script_name: string;
  cron: string;
  created_on: string;
  modified_on: string;
}

/** One invocation of a script's scheduled() handler. */
export interface CronRunRecord {
  id: string;
  account_id: string;
  script_name: string;
  cron: string;
  /** The occurrence it ran for (ISO, whole minutes for scheduled runs). */
  scheduled_time: string;
  /** `schedule` (the scheduler) or `manual` (`ledge crons trigger`). */
  source: 'schedule' | 'manual';
  /** `running`, then `ok`, `exception` (the handler threw) or `error` (the runtime could not run it). */
  status: 'running' | 'ok' | 'exception' | 'error';
  started_on: string;
  duration_ms: number | null;
  error: string | null;
}

/** Runs kept per script; older ones are deleted as new ones start. */
const RUNS_KEPT = 100;

/** All SQL of Cron Triggers, for both dialects (src/db/sql.ts). */
export class CronStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async listSchedules(accountId: string, script: string): Promise<ScheduleRecord[]> {
    return this.#db.all<ScheduleRecord>(
      'SELECT * FROM worker_schedules WHERE account_id = ? AND script_name = ? ORDER BY created_on, cron',
      [accountId, script],
    );
  }

  /** The scripts that have Cron Triggers, as `account/script`. */
  async scheduledScripts(): Promise<Set<string>> {
    const rows = await this.#db.all<{ account_id: string; script_name: string }>(
      'SELECT DISTINCT account_id, script_name FROM worker_schedules',
    );
    return new Set(rows.map((row) => `${row.account_id}/${row.script_name}`));
  }

  async allSchedules(): Promise<ScheduleRecord[]> {
    return this.#db.all<ScheduleRecord>('SELECT * FROM worker_schedules ORDER BY account_id, script_name, cron');
  }

  /** Replaces a script's schedules; crons kept keep their created_on. */
  async replaceSchedules(accountId: string, script: string, crons: string[], now: string): Promise<ScheduleRecord[]> {
    await this.#db.transaction(async (tx) => {
      const kept = new Set(crons);
      const existing = await tx.all<{ cron: string }>(
        'SELECT cron FROM worker_schedules WHERE account_id = ? AND script_name = ?',
        [accountId, script],
      );
      for (const row of existing) {
        if (!kept.has(row.cron)) {
          await tx.run('DELETE FROM worker_schedules WHERE account_id = ? AND script_name = ? AND cron = ?', [
            accountId,
            script,
            row.cron,
          ]);
        }
      }
      for (const cron of kept) {
        await tx.run(
          `INSERT INTO worker_schedules (account_id, script_name, cron, created_on, modified_on) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (account_id, script_name, cron) DO NOTHING`,
          [accountId, script, cron, now, now],
        );
      }
    });
    return this.listSchedules(accountId, script);
  }

  /**
   * Claims an occurrence: true when this call created the run (it must run it), false when a run of the
   * same script, cron and time exists (another node, or a restart within the same minute, has it).
   */
  async claimRun(run: Omit<CronRunRecord, 'duration_ms' | 'error' | 'status'>): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      const inserted = await tx.run(
        `INSERT INTO worker_cron_runs (id, account_id, script_name, cron, scheduled_time, source, status, started_on)
         VALUES (?, ?, ?, ?, ?, ?, 'running', ?)
         ON CONFLICT (account_id, script_name, cron, scheduled_time) DO NOTHING`,
        [run.id, run.account_id, run.script_name, run.cron, run.scheduled_time, run.source, run.started_on],
      );
      if (inserted.changes === 0) return false;
      await tx.run(
        `DELETE FROM worker_cron_runs WHERE account_id = ? AND script_name = ? AND id NOT IN (
           SELECT id FROM worker_cron_runs WHERE account_id = ? AND script_name = ? ORDER BY started_on DESC LIMIT ?)`,
        [run.account_id, run.script_name, run.account_id, run.script_name, RUNS_KEPT],
      );
      return true;
    });
  }

  async finishRun(
    id: string,
    status: CronRunRecord['status'],
    durationMs: number,
    error: string | null,
  ): Promise<void> {
    await this.#db.run('UPDATE worker_cron_runs SET status = ?, duration_ms = ?, error = ? WHERE id = ?', [
      status,
      durationMs,
      error,
      id,
    ]);
  }

  /** The newest runs of a script first. */
  async listRuns(accountId: string, script: string, limit: number): Promise<CronRunRecord[]> {
    return this.#db.all<CronRunRecord>(
      'SELECT * FROM worker_cron_runs WHERE account_id = ? AND script_name = ? ORDER BY started_on DESC, id LIMIT ?',
      [accountId, script, limit],
    );
  }
}
