import type { SqlDatabase } from '../../db/index.ts';
import type { AssetManifest } from './schemas.ts';

/** Rows per `IN (...)` list: well under SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 500;

export interface AssetFileRow {
  hash: string;
  blob_id: string;
  size: number;
}

export interface AssetSession {
  id: string;
  account_id: string;
  script_name: string;
  manifest: AssetManifest;
  expires_at: number;
}

/** The account's content-addressed asset files and the upload sessions, in the workers' database tables. */
export class SqlAssetStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  /** The files of `hashes` the account has, by hash. */
  async files(accountId: string, hashes: readonly string[]): Promise<Map<string, AssetFileRow>> {
    const found = new Map<string, AssetFileRow>();
    for (let i = 0; i < hashes.length; i += CHUNK) {
      const chunk = hashes.slice(i, i + CHUNK);
      const rows = await this.#db.all<AssetFileRow>(
        `SELECT hash, blob_id, size FROM worker_asset_files WHERE account_id = ? AND hash IN (${chunk.map(() => '?').join(', ')})`,
        [accountId, ...chunk],
      );
      for (const row of rows) found.set(row.hash, { ...row, size: Number(row.size) });
    }
    return found;
  }

  /** Marks the account's files as counted on at `now` (ms), so collection spares them for a while. */
  async touch(accountId: string, hashes: readonly string[], now: number): Promise<void> {
    for (let i = 0; i < hashes.length; i += CHUNK) {
      const chunk = hashes.slice(i, i + CHUNK);
      await this.#db.run(
        `UPDATE worker_asset_files SET touched_on = ? WHERE account_id = ? AND hash IN (${chunk.map(() => '?').join(', ')})`,
        [now, accountId, ...chunk],
      );
    }
  }

  /**
   * Records stored files in one transaction; answers those the account already had (the caller frees
   * their blobs).
   */
  async addFiles(accountId: string, files: readonly AssetFileRow[], now: number): Promise<AssetFileRow[]> {
    return this.#db.transaction(async (tx) => {
      const duplicates: AssetFileRow[] = [];
      for (const file of files) {
        const result = await tx.run(
          `INSERT INTO worker_asset_files (account_id, hash, blob_id, size, touched_on) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (account_id, hash) DO NOTHING`,
          [accountId, file.hash, file.blob_id, file.size, now],
        );
        if (result.changes === 0) duplicates.push(file);
      }
      return duplicates;
    });
  }

  async createSession(session: AssetSession): Promise<void> {
    await this.#db.run(
      'INSERT INTO worker_asset_sessions (id, account_id, script_name, manifest, expires_at) VALUES (?, ?, ?, ?, ?)',
      [session.id, session.account_id, session.script_name, JSON.stringify(session.manifest), session.expires_at],
    );
  }

  async getSession(accountId: string, id: string): Promise<AssetSession | undefined> {
    const row = await this.#db.get<Omit<AssetSession, 'manifest'> & { manifest: string }>(
      'SELECT * FROM worker_asset_sessions WHERE account_id = ? AND id = ?',
      [accountId, id],
    );
    return row && { ...row, expires_at: Number(row.expires_at), manifest: JSON.parse(row.manifest) as AssetManifest };
  }

  async deleteExpiredSessions(now: number): Promise<number> {
    return (await this.#db.run('DELETE FROM worker_asset_sessions WHERE expires_at < ?', [now])).changes;
  }

  /** Every (account, hash) some version of some script still names. */
  async referenced(): Promise<Set<string>> {
    const rows = await this.#db.all<{ account_id: string; assets: string }>(
      'SELECT account_id, assets FROM worker_versions WHERE assets IS NOT NULL',
    );
    const out = new Set<string>();
    for (const row of rows) {
      const manifest = (JSON.parse(row.assets) as { manifest: AssetManifest }).manifest;
      for (const entry of Object.values(manifest)) out.add(`${row.account_id}/${entry.hash}`);
    }
    return out;
  }

  /** The blob of every file of every account: a blob of the assets store that none of them names is an orphan. */
  async blobIds(): Promise<Set<string>> {
    const rows = await this.#db.all<{ blob_id: string }>('SELECT blob_id FROM worker_asset_files');
    return new Set(rows.map((row) => row.blob_id));
  }

  /** Files nobody touched since `before` (ms): the candidates for collection. */
  async untouchedSince(before: number): Promise<(AssetFileRow & { account_id: string })[]> {
    const rows = await this.#db.all<AssetFileRow & { account_id: string }>(
      'SELECT account_id, hash, blob_id, size FROM worker_asset_files WHERE touched_on < ?',
      [before],
    );
    return rows.map((r) => ({ ...r, size: Number(r.size) }));
  }

  /** Forgets a file unless it was touched since `before` (an upload session counted on it meanwhile). */
  async removeFile(accountId: string, hash: string, before: number): Promise<boolean> {
    const result = await this.#db.run(
      'DELETE FROM worker_asset_files WHERE account_id = ? AND hash = ? AND touched_on < ?',
      [accountId, hash, before],
    );
    return result.changes > 0;
  }
}
