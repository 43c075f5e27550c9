import type { SqlExecutor } from '../db/index.ts';

/**
 * The `ledge server` nodes that share one database, by heartbeat. A node is live while its last heartbeat
 * is younger than the staleness bound; work sharded over nodes (health checks) is spread over the live ones.
 */
export interface NodeStore {
  /** Records that `nodeId` is alive at `now` (registering it on the first beat). */
  heartbeat(nodeId: string, now: number): Promise<void>;
  /** Ids of the nodes whose last heartbeat is after `now - staleAfterMs`, sorted. */
  liveNodes(now: number, staleAfterMs: number): Promise<string[]>;
  /** Removes a node that is stopping, so the others take its share at once. */
  leave(nodeId: string): Promise<void>;
  /** Forgets nodes silent for longer than `olderThanMs` (their rows are only history). */
  prune(now: number, olderThanMs: number): Promise<number>;
}

export class SqlNodeStore implements NodeStore {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async heartbeat(nodeId: string, now: number): Promise<void> {
    await this.#db.run(
      `INSERT INTO cluster_nodes (id, started_at, heartbeat_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
      [nodeId, now, now],
    );
  }

  async liveNodes(now: number, staleAfterMs: number): Promise<string[]> {
    const rows = await this.#db.all<{ id: string }>('SELECT id FROM cluster_nodes WHERE heartbeat_at > ? ORDER BY id', [
      now - staleAfterMs,
    ]);
    return rows.map((row) => row.id);
  }

  async leave(nodeId: string): Promise<void> {
    await this.#db.run('DELETE FROM cluster_nodes WHERE id = ?', [nodeId]);
  }

  async prune(now: number, olderThanMs: number): Promise<number> {
    return (await this.#db.run('DELETE FROM cluster_nodes WHERE heartbeat_at <= ?', [now - olderThanMs])).changes;
  }
}
