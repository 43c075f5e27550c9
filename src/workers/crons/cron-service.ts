import { randomUUID } from 'node:crypto';
import { clip, LedgeError } from '../../shared/errors.ts';
import type { LedgeMetrics } from '../../shared/ledge-metrics.ts';
import type { Logger } from '../../shared/logger.ts';
import { newRequestId } from '../../shared/ids.ts';
import { currentRequestId } from '../../shared/request-context.ts';
import type { Clock, ClockTimer } from '../../shared/clock.ts';
import type { FunctionLogHub, ScheduledOutcome } from '../../workerd/index.ts';
import { CronSyntaxError, nextCronTime, parseCron, type CronExpression } from './cron-expression.ts';
import type { CronRunRecord, CronStore, ScheduleRecord } from './cron-store.ts';

/** Cloudflare allows 250 Cron Triggers per account on paid plans; one script may not hold more. */
export const MAX_SCHEDULES_PER_SCRIPT = 250;
/** Timers longer than this are re-armed (setTimeout's limit is ~24.8 days). */
const MAX_TIMER_MS = 3_600_000;

export const CronErrors = {
  invalidCron: (detail: string) => new LedgeError(400, 10100, `Invalid cron expression: ${clip(detail)}`),
  invalidBody: (detail: string) => new LedgeError(400, 10021, clip(detail)),
  tooMany: () => new LedgeError(400, 10100, `A Worker may have at most ${MAX_SCHEDULES_PER_SCRIPT} Cron Triggers.`),
  noSchedule: (cron: string) =>
    new LedgeError(404, 10100, `This Worker has no Cron Trigger "${clip(cron)}": pass one of its crons.`),
};

export interface CronDeps {
  store: CronStore;
  /** Throws the v4 404 when the script does not exist. */
  requireScript: (accountId: string, script: string) => Promise<unknown>;
  runtime: { runScheduled(target: RunTarget): Promise<ScheduledOutcome> };
  /** A script gained its first or lost its last Cron Trigger (the runtime loads scripts with crons). */
  onScheduledChanged?: (accountId: string, script: string) => Promise<void>;
  /** Any schedule was replaced (other nodes plan their timers again). */
  onSchedulesChanged?: () => void;
  logs: FunctionLogHub;
  logger: Logger;
  metrics?: LedgeMetrics | undefined;
  /** The schedule's time and its timer (tests of the schedule pass a clock they advance). */
  clock: Clock;
}

interface RunTarget {
  accountId: string;
  script: string;
  cron: string;
  scheduledTime: number;
}

interface Planned {
  schedule: ScheduleRecord;
  expression: CronExpression;
  due: number;
}

/**
 * Cron Triggers: the schedules wrangler sets (`PUT .../schedules`) and the scheduler that runs each
 * script's scheduled() handler at their times, in UTC. Each occurrence is claimed as a row first (one
 * node runs it, see CronStore.claimRun) and finished with its outcome and duration. After downtime
 * nothing is replayed: on start every schedule's next occurrence is computed from now.
 */
export class CronService {
  readonly name = 'cron-triggers';
  readonly #deps: CronDeps;
  readonly #clock: Clock;
  #plan: Planned[] = [];
  #timer: ClockTimer | undefined;
  #running = false;
  /** Runs under way (stop() gives them a moment to record their outcome). */
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #listeners = new Set<(run: CronRunRecord, result: ScheduledOutcome) => void>();

  constructor(deps: CronDeps) {
    this.#deps = deps;
    this.#clock = deps.clock;
  }

  async getSchedules(accountId: string, script: string) {
    await this.#deps.requireScript(accountId, script);
    return { schedules: (await this.#deps.store.listSchedules(accountId, script)).map(renderSchedule) };
  }

  /** The body wrangler sends: `[{ "cron": "*\/5 * * * *" }, ...]` (an empty array removes them all). */
  async putSchedules(accountId: string, script: string, body: unknown) {
    await this.#deps.requireScript(accountId, script);
    const crons = parseSchedulesBody(body, new Date(this.#clock.now()));
    const now = new Date(this.#clock.now()).toISOString();
    const before = await this.#deps.store.listSchedules(accountId, script);
    const saved = await this.#deps.store.replaceSchedules(accountId, script, crons, now);
    if (before.length > 0 !== saved.length > 0) await this.#deps.onScheduledChanged?.(accountId, script);
    this.#deps.onSchedulesChanged?.();
    await this.reschedule();
    return { schedules: saved.map(renderSchedule) };
  }

  async runs(accountId: string, script: string, limit = 20): Promise<CronRunRecord[]> {
    await this.#deps.requireScript(accountId, script);
    return this.#deps.store.listRuns(accountId, script, Math.min(Math.max(limit, 1), 100));
  }

  /** Runs a script's scheduled() handler now (`ledge crons trigger`), as one of its crons or the first. */
  async trigger(accountId: string, script: string, cron?: string): Promise<CronRunRecord> {
    await this.#deps.requireScript(accountId, script);
    const schedules = await this.#deps.store.listSchedules(accountId, script);
    let chosen = cron ?? schedules[0]?.cron;
    if (cron !== undefined && !schedules.some((s) => s.cron === cron)) {
      try {
        parseCron(cron, new Date(this.#clock.now()));
      } catch (error) {
        throw CronErrors.invalidCron((error as Error).message);
      }
      chosen = cron;
    }
    const run = await this.#run(accountId, script, chosen ?? '', this.#clock.now(), 'manual');
    if (!run) throw new LedgeError(409, 10100, 'A run of this cron at this time already exists.');
    return run;
  }

  /** Called for every finished run (the tail helper can forward them as events). */
  onRun(listener: (run: CronRunRecord, result: ScheduledOutcome) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async start(): Promise<void> {
    this.#running = true;
    await this.reschedule();
  }

  /**
   * Stops planning runs. Runs under way get up to 2 s to finish and record their outcome; one still running
   * then ends when the runtime stops (recorded as `error`), or stays `running` if the database closes first.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#inFlight.size === 0) return;
    await Promise.race([Promise.allSettled(this.#inFlight), new Promise((r) => setTimeout(r, 2_000).unref())]);
  }

  /** Re-reads every schedule and plans each one's next occurrence after now (no backlog is replayed). */
  async reschedule(): Promise<void> {
    if (!this.#running) return;
    const now = new Date(this.#clock.now());
    const plan: Planned[] = [];
    for (const schedule of await this.#deps.store.allSchedules()) {
      // A stored expression that no longer parses (a rule of a later version) is skipped, not fatal.
      try {
        const expression = parseCron(schedule.cron, now);
        const due = nextCronTime(expression, now);
        if (due) plan.push({ schedule, expression, due: due.getTime() });
      } catch (error) {
        this.#deps.logger.warn('cron trigger skipped', {
          cron: schedule.cron,
          script: schedule.script_name,
          err: error,
        });
      }
    }
    this.#plan = plan;
    this.#arm();
  }

  /** The planned next occurrences (tests, `ledge crons list`). */
  nextRuns(accountId: string, script: string): { cron: string; next: string }[] {
    return this.#plan
      .filter((p) => p.schedule.account_id === accountId && p.schedule.script_name === script)
      .map((p) => ({ cron: p.schedule.cron, next: new Date(p.due).toISOString() }));
  }

  #arm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (!this.#running || this.#plan.length === 0) return;
    const earliest = Math.min(...this.#plan.map((p) => p.due));
    const delay = Math.max(0, Math.min(earliest - this.#clock.now(), MAX_TIMER_MS));
    this.#timer = this.#clock.schedule(delay, () => this.#fire());
  }

  #fire(): void {
    const now = this.#clock.now();
    for (const planned of this.#plan) {
      if (planned.due > now) continue;
      const { schedule } = planned;
      const run = this.#run(schedule.account_id, schedule.script_name, schedule.cron, planned.due, 'schedule').catch(
        (error: unknown) => this.#deps.logger.error('cron trigger run failed', { cron: schedule.cron, err: error }),
      );
      this.#inFlight.add(run);
      void run.finally(() => this.#inFlight.delete(run));
      // The next occurrence after now: a late wake-up (suspended machine) skips, never bursts.
      const next = nextCronTime(planned.expression, new Date(Math.max(now, planned.due)));
      planned.due = next ? next.getTime() : Infinity;
    }
    this.#plan = this.#plan.filter((p) => p.due !== Infinity);
    this.#arm();
  }

  async #run(
    accountId: string,
    script: string,
    cron: string,
    scheduledTime: number,
    source: CronRunRecord['source'],
  ): Promise<CronRunRecord | undefined> {
    const started = this.#clock.now();
    // How long the handler took is real time, whatever clock schedules it.
    const startedAt = performance.now();
    const run: CronRunRecord = {
      id: randomUUID(),
      account_id: accountId,
      script_name: script,
      cron,
      scheduled_time: new Date(scheduledTime).toISOString(),
      source,
      status: 'running',
      started_on: new Date(started).toISOString(),
      duration_ms: null,
      error: null,
    };
    if (!(await this.#deps.store.claimRun(run))) return undefined;
    const result = await this.#deps.runtime.runScheduled({ accountId, script, cron, scheduledTime });
    run.duration_ms = Math.max(0, Math.round(performance.now() - startedAt));
    run.status = result.outcome === 'ok' ? 'ok' : result.outcome === 'exception' ? 'exception' : 'error';
    run.error =
      run.status === 'ok'
        ? null
        : result.outcome === 'not_loaded'
          ? 'the Worker is not running: it has no deployment'
          : (result.error ?? `scheduled() ended with outcome ${result.outcome}`);
    await this.#deps.store.finishRun(run.id, run.status, run.duration_ms, run.error);
    this.#deps.metrics?.scheduledRuns.inc({ account: accountId, script, outcome: run.status });
    // One line in the function's logs (ledge tail, wrangler tail's log stream) per run.
    this.#deps.logs.record(accountId, script, {
      time: run.started_on,
      level: run.status === 'ok' ? 'info' : 'error',
      message: [
        `[cron] "${cron}" scheduled ${run.scheduled_time}: ${run.status} in ${run.duration_ms} ms${run.error ? ` (${run.error})` : ''}`,
      ],
    });
    this.#deps.logger.info('cron trigger ran', {
      account: accountId,
      script,
      cron,
      scheduled_time: run.scheduled_time,
      status: run.status,
      duration_ms: run.duration_ms,
      // The API call's (ledge crons trigger), else one of the run's own: a scheduled run is a request too.
      request_id: currentRequestId() ?? newRequestId(),
    });
    for (const listener of this.#listeners) listener(run, result);
    return run;
  }
}

function renderSchedule(row: ScheduleRecord) {
  return { cron: row.cron, created_on: row.created_on, modified_on: row.modified_on };
}

/** Validates wrangler's body: an array of `{ cron }` objects, each a valid expression, no duplicates. */
export function parseSchedulesBody(body: unknown, now: Date): string[] {
  if (!Array.isArray(body)) throw CronErrors.invalidBody('The body must be an array of {"cron": "<expression>"}.');
  if (body.length > MAX_SCHEDULES_PER_SCRIPT) throw CronErrors.tooMany();
  const crons: string[] = [];
  for (const [index, item] of body.entries()) {
    const cron = (item as { cron?: unknown } | null)?.cron;
    if (typeof cron !== 'string') throw CronErrors.invalidBody(`Item ${index} must be {"cron": "<expression>"}.`);
    try {
      parseCron(cron, now);
    } catch (error) {
      if (error instanceof CronSyntaxError) throw CronErrors.invalidCron(error.message);
      throw error;
    }
    const normalized = cron.trim().split(/\s+/).join(' ');
    if (!crons.includes(normalized)) crons.push(normalized);
  }
  return crons;
}
