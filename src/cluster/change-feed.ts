import { EventEmitter } from 'node:events';
import { PostgresDatabase, type SqlDatabase, type SqlExecutor } from '../db/index.ts';
import type { Logger } from '../shared/logger.ts';

/** A change another node may have cached: `topic` names what (`worker_deployments`), `key` which one. */
export interface Change {
  topic: string;
  key: string;
  /** The node that made the change (listeners may skip their own). */
  origin: string;
}

type Listener = (change: Change) => void;

const CHANNEL = 'ledge_changes';

/**
 * Tells every node sharing the database that something changed, so per-process caches (bucket lookups,
 * the deployed scripts workerd serves) are invalidated across nodes at once instead of by polling.
 *
 * PostgreSQL: NOTIFY on one channel, sent from the writing transaction when given (delivered only if it
 * commits), with one LISTEN connection per node. SQLite is one node: listeners are called in-process.
 */
export class ChangeFeed {
  readonly #db: SqlDatabase;
  readonly #nodeId: string;
  readonly #logger: Logger | undefined;
  readonly #local = new EventEmitter();
  #unlisten: (() => Promise<void>) | undefined;

  constructor(db: SqlDatabase, nodeId: string, logger?: Logger) {
    this.#db = db;
    this.#nodeId = nodeId;
    this.#logger = logger;
    this.#local.setMaxListeners(0);
  }

  get name(): string {
    return 'change-feed';
  }

  /** Starts listening for other nodes' changes (PostgreSQL); a no-op on SQLite. */
  async start(): Promise<void> {
    if (!(this.#db instanceof PostgresDatabase) || this.#unlisten) return;
    const request = await this.#db.client.listen(CHANNEL, (payload) => this.#deliver(payload));
    this.#unlisten = () => request.unlisten();
  }

  async stop(): Promise<void> {
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    await unlisten?.();
  }

  /**
   * Announces a change. With `tx` (PostgreSQL) the notice leaves only when that transaction commits; on
   * SQLite local listeners run at once (they re-read committed state, so a rollback costs a reload only).
   */
  async publish(topic: string, key: string, tx?: SqlExecutor): Promise<void> {
    const change: Change = { topic, key, origin: this.#nodeId };
    if (this.#db.dialect === 'postgres') {
      await (tx ?? this.#db).run('SELECT pg_notify(?, ?)', [CHANNEL, JSON.stringify(change)]);
      return;
    }
    this.#local.emit('change', change);
  }

  /** Calls `listener` for every change, from any node; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#local.on('change', listener);
    return () => this.#local.off('change', listener);
  }

  #deliver(payload: string): void {
    let change: Change;
    try {
      change = JSON.parse(payload) as Change;
    } catch {
      this.#logger?.warn('ignored a malformed change notice', { payload: payload.slice(0, 200) });
      return;
    }
    this.#local.emit('change', change);
  }
}
