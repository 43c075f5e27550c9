import type { SqlDatabase, SqlExecutor, SqlTransaction } from '../db/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import type { DeliveryHistory, HistoryAttempt, HistoryItem } from './history.ts';
import type { MailContent, Mailer } from './mail.ts';
import type { Outbox, OutboxRow } from './outbox.ts';
import { deprecationNotice } from './payload.ts';
import type { NotificationStore } from './store.ts';
import type { AlertSilences } from './silences.ts';
import type { PoolDirectory } from './types.ts';
import type { WebhookSender } from './webhook-sender.ts';
import { WebhookTargets, type WebhookTarget } from './webhook-targets.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Clock, ClockTimer } from '../shared/clock.ts';

export interface RetryPolicy {
  /** First retry after this long; each further one doubles it, up to `maxDelayMs` (with ±20% jitter). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A delivery still failing this long after it was written is given up (the history keeps every attempt). */
  giveUpAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  giveUpAfterMs: 24 * 60 * 60 * 1000,
};

interface Outcome {
  row: OutboxRow;
  ok: boolean;
  error: string | null;
  mechanism: string;
  webhookId: string | null;
  /** A message written at send time (deprecation notices), to store for the history; else the row's message. */
  sentBody: string | null;
  /** A failure that retrying cannot fix (the webhook was deleted). */
  permanent: boolean;
  /** Nothing had to be sent (a deprecation notice after the account migrated). */
  skipped: boolean;
  /** Not sent: its policy was silenced when the alert was raised. */
  silenced?: boolean;
}

/**
 * How long outcomes wait to be written with others. Each commit costs milliseconds when the disk is busy
 * (it blocks the event loop, and with it every send), so under load fewer, larger commits win; a send's
 * slot is freed as soon as it finishes, not when its outcome is written.
 */
const FLUSH_DELAY_MS = 20;

export function backoffMs(attempts: number, retry: RetryPolicy, random = Math.random): number {
  const exponential = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/**
 * Sends outbox rows. Rows written by this process come in memory from the outbox once their transaction
 * has committed (woken by the fan-out: no polling delay, no claim UPDATE); rows in the table (retries,
 * rows left by an earlier process) are claimed when due, and a timer wakes it for them. Up to
 * `concurrency` sends run at once. Outcomes are written back in batches, one transaction each (a history
 * row per attempt, webhook last_success/last_failure, rows removed or rescheduled), and the same
 * transaction claims the next due rows. A row is removed only once its outcome is committed, so a crash
 * mid-send means a resend: at-least-once.
 */
export class Dispatcher {
  readonly name = 'notifications-dispatcher';
  readonly #db: SqlDatabase;
  readonly #store: NotificationStore;
  readonly #outbox: Outbox;
  readonly #history: DeliveryHistory;
  readonly #webhooks: WebhookSender;
  readonly #targets: WebhookTargets;
  readonly #mailer: Mailer;
  readonly #pools: PoolDirectory;
  readonly #logger: Logger;
  readonly #retry: RetryPolicy;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #metrics: LedgeMetrics | undefined;
  readonly #silences: Pick<AlertSilences, 'silencedBy' | 'start' | 'stop'> | undefined;
  #running = false;
  /** Sends under way (bounded by `concurrency`). */
  #sending = 0;
  /** Rows sent or being sent whose outcome is not written yet. */
  #inFlight = 0;
  #tickQueued = false;
  /** A tick is claiming (one at a time); `#tickAgain` asks for another when it is done. */
  #ticking = false;
  #tickAgain = false;
  #tickDone: Promise<void> = Promise.resolve();
  readonly #clock: Clock;
  #timer: ClockTimer | undefined;
  /** When the earliest row in the table comes due, as far as this process knows (Infinity: none). */
  #tableDueMs = Infinity;
  readonly #pollMs: number | undefined;
  #outcomes: Outcome[] = [];
  #flushQueued = false;
  /** The last outcome-recording transaction: the next one starts after it (see #flush). */
  #recording: Promise<unknown> = Promise.resolve();
  #idle: (() => void)[] = [];

  constructor(options: {
    db: SqlDatabase;
    store: NotificationStore;
    outbox: Outbox;
    history: DeliveryHistory;
    webhooks: WebhookSender;
    mailer: Mailer;
    secretBox: SecretBox;
    pools: PoolDirectory;
    logger: Logger;
    retry?: RetryPolicy;
    concurrency?: number;
    leaseMs?: number;
    /**
     * With several nodes: look at the table at least this often. Rows another node wrote (and leased to
     * itself) are not announced here; if that node dies, their leases run out and a survivor sends them.
     */
    pollMs?: number | undefined;
    metrics?: LedgeMetrics | undefined;
    /** Policies silenced for a window: their alerts are recorded as silenced, not sent. */
    silences?: Pick<AlertSilences, 'silencedBy' | 'start' | 'stop'> | undefined;
    /** Due times of retries and leases, and the timer that waits for them (tests advance their own). */
    clock: Clock;
  }) {
    this.#clock = options.clock;
    this.#silences = options.silences;
    this.#metrics = options.metrics;
    this.#pollMs = options.pollMs;
    this.#db = options.db;
    this.#store = options.store;
    this.#outbox = options.outbox;
    this.#history = options.history;
    this.#webhooks = options.webhooks;
    this.#targets = new WebhookTargets(options.store, options.secretBox);
    this.#mailer = options.mailer;
    this.#pools = options.pools;
    this.#logger = options.logger;
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.#concurrency = options.concurrency ?? 512;
    this.#leaseMs = options.leaseMs ?? 120_000;
  }

  async start(): Promise<void> {
    // Released before the hand-off starts, so that no row handed over in memory is also due in the table.
    const released = await this.#outbox.releaseLeases(this.#clock.now());
    if (released > 0) this.#logger.info('resending deliveries interrupted by the last shutdown', { count: released });
    await this.#silences?.start();
    this.#running = true;
    this.#outbox.handOffTo(this.#leaseMs);
    this.#tableDueMs = 0;
    this.wake();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#silences?.stop();
    // Rows not yet handed over stay leased in the table; the next start releases them.
    this.#outbox.handOffTo(undefined);
    this.#timer?.cancel();
    await this.#tickDone;
    // Let sends already under way finish and record their outcome; unsent rows stay in the outbox.
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    this.#webhooks.close();
    this.#mailer.close();
  }

  /**
   * Resolves once every row due by the clock's now is sent and its outcome recorded. A test checks after it
   * that a delivery did not happen, instead of waiting a while in case it might (sends are real I/O).
   */
  async settled(): Promise<void> {
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.#running) return;
      if (this.#tickQueued || this.#ticking) {
        await this.#tickDone;
      } else if (this.#inFlight > 0) {
        await new Promise<void>((resolve) => this.#idle.push(resolve));
      } else if (this.#outbox.freshWaiting > 0 || this.#tableDueMs <= this.#clock.now()) {
        this.wake();
      } else {
        return;
      }
    }
  }

  /** Called when rows are written; cheap and safe to call often (coalesced into one tick). */
  wake = (): void => {
    if (!this.#running || this.#tickQueued) return;
    this.#tickQueued = true;
    setImmediate(this.#tick);
  };

  readonly #tick = (): void => {
    this.#tickQueued = false;
    if (!this.#running) return;
    if (this.#ticking) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = true;
    this.#tickDone = this.#claimAndSend().finally(() => {
      this.#ticking = false;
      if (this.#tickAgain) {
        this.#tickAgain = false;
        this.wake();
      }
    });
  };

  async #claimAndSend(): Promise<void> {
    const now = this.#clock.now();
    try {
      // A claim writes: in a transaction (SQLite answers lone reads from a read-only connection).
      if (this.#tableDueMs <= now) {
        const rows = await this.#db.transaction((tx) => this.#claim(tx, now));
        this.#scheduleTimer(now);
        await this.#send(rows);
      }
      await this.#send(await this.#takeFresh(now));
    } catch (error) {
      // E.g. the database is unreachable for a moment: nothing is lost (rows stay in the outbox), try again soon.
      this.#logger.error('could not claim deliveries', { err: error });
      this.#retrySoon();
    }
  }

  /**
   * Claims due rows from the table in `tx` (a claim of its own, or the outcome transaction). The caller
   * re-arms the timer once the transaction has ended: a timer set inside it would run its callback in the
   * transaction's async context.
   */
  async #claim(tx: SqlTransaction, now: number): Promise<OutboxRow[]> {
    const capacity = this.#concurrency - this.#sending;
    if (capacity <= 0) return []; // a finishing send claims again
    const rows = await this.#outbox.claim(tx, now, capacity, this.#leaseMs);
    if (rows.length < capacity) this.#tableDueMs = (await this.#outbox.nextDueMs(tx)) ?? Infinity;
    return rows;
  }

  /** New rows handed over in memory (only rows whose transaction committed: see Outbox.append). */
  async #takeFresh(now: number): Promise<OutboxRow[]> {
    const { rows, released } = await this.#outbox.takeFresh(this.#concurrency - this.#sending, now);
    if (released) this.#dueAt(now);
    return rows;
  }

  async #send(rows: OutboxRow[]): Promise<void> {
    // Stopped meanwhile: the rows stay leased in the table and the next start releases them.
    if (rows.length === 0 || !this.#running) return;
    this.#inFlight += rows.length;
    this.#sending += rows.length;
    let targets: Map<string, WebhookTarget | undefined>;
    try {
      targets = await this.#targets.resolve(
        rows
          .filter((row) => row.mechanism_type === 'webhook')
          .map((row) => ({ accountId: row.account_id, webhookId: row.target })),
      );
    } catch (error) {
      // Not sent: each row is retried later like a failed send.
      const message = `could not look up the destination: ${(error as Error).message}`;
      for (const row of rows) this.#finish(failedOutcome(row, message));
      return;
    }
    // Corked: the requests of this batch to one receiver leave together.
    this.#webhooks.corked(() => {
      for (const row of rows) this.#deliver(row, targets.get(row.target));
    });
  }

  /** A table row comes due at `ms`: make sure a tick runs then. */
  #dueAt(ms: number): void {
    if (ms >= this.#tableDueMs) return;
    this.#tableDueMs = ms;
    this.#scheduleTimer(this.#clock.now());
  }

  /** Sleeps until the next table row is due (retries, expired leases); wake() cuts the sleep short. */
  #scheduleTimer(now: number): void {
    this.#timer?.cancel();
    if (!this.#running) return;
    const wait = Math.min(this.#tableDueMs - now, 60_000, this.#pollMs ?? Infinity);
    if (wait === Infinity) return;
    this.#timer = this.#clock.schedule(Math.max(10, wait), this.#onTimer);
  }

  /** After a database error: try again in a second (nothing is lost meanwhile: the rows are in the table). */
  #retrySoon(): void {
    this.#timer?.cancel();
    this.#timer = this.#clock.schedule(1_000, this.#onTimer);
  }

  /** Timers may fire a millisecond before the clock reaches the due time: claim anyway (a claim re-arms the timer). */
  readonly #onTimer = (): void => {
    this.#tableDueMs = Math.min(this.#tableDueMs, this.#clock.now());
    this.wake();
  };

  #deliver(row: OutboxRow, target: WebhookTarget | undefined): void {
    const base = { row, mechanism: row.target, webhookId: null, sentBody: null, permanent: false, skipped: false };
    const silence =
      row.policy_id === null ? undefined : this.#silences?.silencedBy(row.account_id, row.policy_id, row.event_ms);
    if (silence) {
      const until = new Date(silence.end_ms).toISOString();
      return this.#finish({
        ...base,
        ok: true,
        skipped: true,
        silenced: true,
        error: `silenced by ${silence.id} until ${until}`,
      });
    }
    if (row.mechanism_type === 'email') {
      void this.#deliverMail(row, base).then(
        (outcome) => this.#finish(outcome),
        (error: unknown) => this.#finish({ ...base, ok: false, error: (error as Error).message }),
      );
      return;
    }
    if (!target) return this.#finish({ ...base, ok: false, error: 'webhook destination was deleted', permanent: true });
    try {
      this.#webhooks.post(
        target.url,
        row.payload,
        target.secret,
        (result) =>
          this.#finish({ ...base, ok: result.ok, error: result.error, mechanism: target.url, webhookId: target.id }),
        row.request_id ?? undefined,
      );
    } catch (error) {
      this.#finish({ ...base, ok: false, error: (error as Error).message });
    }
  }

  async #deliverMail(row: OutboxRow, base: Omit<Outcome, 'ok' | 'error'>): Promise<Outcome> {
    let content: MailContent;
    let sentBody: string | null = null;
    if (row.kind === 'deprecation_notice') {
      // Notices stop as soon as no pool of the account keeps a legacy email, even ones already queued.
      const remaining = await this.#pools.countPoolsWithLegacyEmail(row.account_id);
      if (remaining === 0) {
        return {
          ...base,
          ok: true,
          skipped: true,
          error: 'not sent: no pool of the account keeps a legacy notification_email',
        };
      }
      content = deprecationNotice(row.account_id, remaining);
      sentBody = JSON.stringify(content);
    } else {
      content = JSON.parse(row.payload) as MailContent;
    }
    await this.#mailer.send({ ...content, to: row.target });
    return { ...base, ok: true, error: null, sentBody };
  }

  /**
   * Outcomes are written a few milliseconds later in one transaction with whatever else finished by then:
   * under load that turns thousands of tiny commits per second into a few hundred larger ones.
   */
  #finish(outcome: Outcome): void {
    this.#sending--;
    // A slot is free: new rows waiting in memory need not wait for the next flush.
    if (this.#outbox.freshWaiting > 0) this.wake();
    this.#outcomes.push(outcome);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    setTimeout(() => void this.#flush(), FLUSH_DELAY_MS);
  }

  async #flush(): Promise<void> {
    this.#flushQueued = false;
    const batch = this.#outcomes;
    this.#outcomes = [];
    const now = this.#clock.now();
    let next: OutboxRow[];
    try {
      let recorded: Recorded;
      // One recording transaction at a time per node: two would lock the same destination rows and wait
      // for each other (on PostgreSQL), and batches that wait grow instead of multiplying commits.
      const recording = this.#recording.then(() =>
        this.#db.transaction(async (tx) => {
          const written = await this.#record(tx, batch, now);
          const claimed = this.#running && this.#tableDueMs <= now ? await this.#claim(tx, now) : [];
          return [claimed, written] as const;
        }),
      );
      this.#recording = recording.catch(() => undefined);
      [next, recorded] = await recording;
      this.#scheduleTimer(now);
      this.#dueAt(recorded.retryAtMs);
      // Counted once the outcomes are committed (a rolled-back batch is sent again).
      for (const [result, count] of Object.entries(recorded.tally))
        if (count > 0) this.#metrics?.deliveries.inc({ result }, count);
    } catch (error) {
      // The rows stay leased and come due again when the lease ends: they will be resent, not lost.
      this.#logger.error('could not record delivery outcomes', { err: error, count: batch.length });
      next = [];
    }
    this.#inFlight -= batch.length;
    try {
      await this.#send(next);
      if (this.#running) await this.#send(await this.#takeFresh(now));
    } catch (error) {
      this.#logger.error('could not claim deliveries', { err: error });
      this.#retrySoon();
    }
    if (this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Writes a batch of outcomes; answers when the earliest retry it scheduled comes due, and the tally. */
  async #record(tx: SqlExecutor, batch: Outcome[], now: number): Promise<Recorded> {
    let retryAtMs = Infinity;
    const tally: Record<DeliveryResult, number> = { sent: 0, failed: 0, retried: 0 };
    const at = new Date(now).toISOString();
    const done: number[] = [];
    const attempts: { row: OutboxRow; attempt: HistoryAttempt }[] = [];
    const webhookStatus = new Map<string, boolean>();
    for (const outcome of batch) {
      const { row } = outcome;
      if (outcome.webhookId) webhookStatus.set(outcome.webhookId, outcome.ok);
      const givingUp = !outcome.ok && (outcome.permanent || now - row.created_ms >= this.#retry.giveUpAfterMs);
      const status: HistoryItem['status'] = outcome.silenced
        ? 'silenced'
        : outcome.skipped
          ? 'skipped'
          : outcome.ok
            ? 'delivered'
            : givingUp
              ? 'failed'
              : 'retrying';
      const messageId =
        outcome.sentBody === null ? row.message_id : await this.#outbox.saveMessage(tx, outcome.sentBody);
      attempts.push({ row, attempt: { status, error: outcome.error, mechanism: outcome.mechanism, messageId, at } });
      // Deliveries an API call set off are rare (health checks set off the bulk): each gets a line with its id.
      if (row.request_id !== null) {
        this.#logger.info('notification delivery', {
          request_id: row.request_id,
          outbox_id: row.id,
          target: outcome.mechanism,
          status,
        });
      }
      if (status === 'delivered') tally.sent++;
      else if (status === 'failed') tally.failed++;
      else if (status === 'retrying') tally.retried++;
      if (outcome.ok || givingUp) {
        done.push(row.id);
        if (givingUp)
          this.#logger.warn('notification delivery given up', {
            outbox_id: row.id,
            request_id: row.request_id ?? undefined,
            target: row.target,
            error: outcome.error,
          });
      } else {
        const attempts = row.attempts + 1;
        const nextAttemptMs = now + backoffMs(attempts, this.#retry);
        await this.#outbox.retryLater(tx, row.id, attempts, nextAttemptMs, outcome.error ?? 'failed');
        retryAtMs = Math.min(retryAtMs, nextAttemptMs);
      }
    }
    await this.#history.recordAll(tx, attempts);
    await this.#outbox.removeAll(tx, done);
    // One write per destination per batch: the outcome of its latest attempt in the batch.
    await this.#store.markWebhookOutcomes(tx, webhookStatus, at);
    return { retryAtMs, tally };
  }
}

function failedOutcome(row: OutboxRow, error: string): Outcome {
  return {
    row,
    ok: false,
    error,
    mechanism: row.target,
    webhookId: null,
    sentBody: null,
    permanent: false,
    skipped: false,
  };
}

/** The delivery results /metrics counts: delivered, given up, failed and rescheduled. */
type DeliveryResult = 'sent' | 'failed' | 'retried';

interface Recorded {
  /** When the earliest retry scheduled by the batch comes due (Infinity: none). */
  retryAtMs: number;
  tally: Record<DeliveryResult, number>;
}
