import { isUniqueViolation, type SqlDatabase, type SqlValue } from '../db/index.ts';
import { QueueErrors } from './errors.ts';
import type { ConsumerRecord, QueueRecord } from './schemas.ts';

const QUEUE_COLUMNS =
  'queue_id, account_id, queue_name, delivery_delay, delivery_paused, message_retention_period, created_on, modified_on';
const CONSUMER_COLUMNS =
  'consumer_id, queue_id, account_id, script_name, dead_letter_queue, batch_size, max_retries, max_wait_time_ms, max_concurrency, retry_delay, created_on';

/** Numbers come back as strings from PostgreSQL's COUNT; integers stay numbers in both dialects. */
const toNumber = (row: { n: number | string } | undefined): number => Number(row?.n ?? 0);

/** The records of queues and their consumers, in either dialect. */
export class SqlQueueStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insert(record: QueueRecord): Promise<void> {
    try {
      await this.#db.run(`INSERT INTO queues (${QUEUE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
        record.queue_id,
        record.account_id,
        record.queue_name,
        record.delivery_delay,
        record.delivery_paused,
        record.message_retention_period,
        record.created_on,
        record.modified_on,
      ]);
    } catch (error) {
      throw nameTakenOr(error, record.queue_name);
    }
  }

  async update(record: QueueRecord): Promise<void> {
    try {
      await this.#db.run(
        'UPDATE queues SET queue_name = ?, delivery_delay = ?, delivery_paused = ?, message_retention_period = ?, modified_on = ? WHERE account_id = ? AND queue_id = ?',
        [
          record.queue_name,
          record.delivery_delay,
          record.delivery_paused,
          record.message_retention_period,
          record.modified_on,
          record.account_id,
          record.queue_id,
        ],
      );
    } catch (error) {
      throw nameTakenOr(error, record.queue_name);
    }
  }

  /** By id or by name, within one account only. */
  async find(accountId: string, idOrName: string): Promise<QueueRecord | undefined> {
    return this.#db.get<QueueRecord>(
      `SELECT ${QUEUE_COLUMNS} FROM queues WHERE account_id = ? AND (queue_id = ? OR queue_name = ?)`,
      [accountId, idOrName.toLowerCase(), idOrName],
    );
  }

  async count(accountId: string): Promise<number> {
    return toNumber(await this.#db.get('SELECT COUNT(*) AS n FROM queues WHERE account_id = ?', [accountId]));
  }

  /** The account's queues, in creation order; `names` keeps only those (wrangler asks by name). */
  async list(accountId: string, names: readonly string[]): Promise<QueueRecord[]> {
    const where = names.length > 0 ? ` AND queue_name IN (${names.map(() => '?').join(', ')})` : '';
    return this.#db.all<QueueRecord>(
      `SELECT ${QUEUE_COLUMNS} FROM queues WHERE account_id = ?${where} ORDER BY created_on, queue_id`,
      [accountId, ...names],
    );
  }

  async delete(accountId: string, queueId: string): Promise<boolean> {
    await this.#db.run('DELETE FROM queue_consumers WHERE account_id = ? AND queue_id = ?', [accountId, queueId]);
    return (
      (await this.#db.run('DELETE FROM queues WHERE account_id = ? AND queue_id = ?', [accountId, queueId])).changes > 0
    );
  }

  /** Every account that has a queue (their queue engines start with the server). */
  async accounts(): Promise<string[]> {
    const rows = await this.#db.all<{ account_id: string }>('SELECT DISTINCT account_id FROM queues');
    return rows.map((row) => row.account_id);
  }

  async insertConsumer(record: ConsumerRecord): Promise<void> {
    try {
      await this.#db.run(
        `INSERT INTO queue_consumers (${CONSUMER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        consumerValues(record),
      );
    } catch (error) {
      if (
        isUniqueViolation(error, {
          sqliteColumns: 'queue_consumers.queue_id',
          postgresConstraint: 'queue_consumers_queue_id_key',
        })
      )
        throw QueueErrors.consumerExists(record.queue_id);
      throw error;
    }
  }

  async replaceConsumer(record: ConsumerRecord): Promise<void> {
    await this.#db.run(
      'UPDATE queue_consumers SET script_name = ?, dead_letter_queue = ?, batch_size = ?, max_retries = ?, max_wait_time_ms = ?, max_concurrency = ?, retry_delay = ? WHERE account_id = ? AND consumer_id = ?',
      [
        record.script_name,
        record.dead_letter_queue,
        record.batch_size,
        record.max_retries,
        record.max_wait_time_ms,
        record.max_concurrency,
        record.retry_delay,
        record.account_id,
        record.consumer_id,
      ],
    );
  }

  async deleteConsumer(accountId: string, consumerId: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM queue_consumers WHERE account_id = ? AND consumer_id = ?', [
      accountId,
      consumerId,
    ]);
    return result.changes > 0;
  }

  /** The consumers of the account, or of one of its queues. */
  async consumers(accountId: string, queueId?: string): Promise<ConsumerRecord[]> {
    return queueId === undefined
      ? this.#db.all<ConsumerRecord>(
          `SELECT ${CONSUMER_COLUMNS} FROM queue_consumers WHERE account_id = ? ORDER BY created_on, consumer_id`,
          [accountId],
        )
      : this.#db.all<ConsumerRecord>(
          `SELECT ${CONSUMER_COLUMNS} FROM queue_consumers WHERE account_id = ? AND queue_id = ? ORDER BY created_on`,
          [accountId, queueId],
        );
  }

  /** Every consumer of every account, with its queue's name (the runtime serves each consumer script's relay). */
  async allConsumers(): Promise<(ConsumerRecord & { queue_name: string })[]> {
    const columns = CONSUMER_COLUMNS.split(', ')
      .map((column) => `c.${column}`)
      .join(', ');
    return this.#db.all<ConsumerRecord & { queue_name: string }>(
      `SELECT ${columns}, q.queue_name FROM queue_consumers c JOIN queues q ON q.queue_id = c.queue_id ORDER BY c.account_id`,
    );
  }

  /** A deleted script consumes nothing: its consumers go with it. Returns whether any did. */
  async forgetScript(accountId: string, script: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM queue_consumers WHERE account_id = ? AND script_name = ?', [
      accountId,
      script,
    ]);
    return result.changes > 0;
  }
}

function consumerValues(record: ConsumerRecord): SqlValue[] {
  return [
    record.consumer_id,
    record.queue_id,
    record.account_id,
    record.script_name,
    record.dead_letter_queue,
    record.batch_size,
    record.max_retries,
    record.max_wait_time_ms,
    record.max_concurrency,
    record.retry_delay,
    record.created_on,
  ];
}

/**
 * A write that lost a race for a queue's name (both passed the service's check) answers 11009 as the check
 * would have; any other error is given back as it was.
 */
function nameTakenOr(error: unknown, name: string): unknown {
  return isUniqueViolation(error, {
    sqliteColumns: 'queues.account_id, queues.queue_name',
    postgresConstraint: 'queues_account_id_queue_name_key',
  })
    ? QueueErrors.duplicateName(name)
    : error;
}
