import { isUniqueViolation, toSqlBool, type SqlDatabase, type SqlExecutor } from '../db/index.ts';
import {
  DEPLOYED_VERSION_COLUMNS,
  fromDeployedVersion,
  toDeployment,
  toScript,
  toVersion,
  type DeploymentRow,
  type ScriptRow,
  type DeployedRow,
  type VersionRow,
} from './store-rows.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { writeScriptClasses, type ScriptClasses } from './durable-objects/store.ts';
import type { DeploymentRecord, ScriptRecord, ScriptSettings, SecretRecord, VersionRecord } from './types.ts';
import { isoNow } from '../shared/time.ts';
import type { Clock } from '../shared/clock.ts';

/** Persistence of scripts, versions, deployments, secrets and subdomains (SQLite or PostgreSQL: `SqlWorkerStore`). */
export interface WorkerStore {
  getScript(accountId: string, name: string): Promise<ScriptRecord | undefined>;
  listScripts(accountId: string): Promise<ScriptRecord[]>;
  deleteScript(accountId: string, name: string): Promise<boolean>;
  /** Stores a new version (creating the script if needed) and, when `deployment` is given, deploys it. */
  saveVersion(input: {
    script: Omit<ScriptRecord, 'current_deployment_id' | 'workers_dev' | 'previews_enabled' | 'settings'>;
    version: Omit<VersionRecord, 'number'>;
    secrets: { name: string; text: string }[];
    /** Secrets the new version no longer has (a settings PATCH whose bindings leave them out). */
    removeSecrets?: string[];
    deployment?: DeploymentRecord;
    /**
     * The script's Durable Object migration tag and classes after this upload, and the tag they were planned
     * from (still the script's, or the upload is refused: durable-objects/store.ts).
     */
    durableObjects?: ScriptClasses & { previousTag: string | null };
  }): Promise<VersionRecord>;
  getVersion(accountId: string, script: string, id: string): Promise<VersionRecord | undefined>;
  listVersions(accountId: string, script: string): Promise<VersionRecord[]>;
  addDeployment(deployment: DeploymentRecord): Promise<void>;
  getDeployment(id: string): Promise<DeploymentRecord | undefined>;
  /** Removes a deployment that is not the script's current one; false when there is none such. */
  deleteDeployment(accountId: string, script: string, id: string): Promise<boolean>;
  /**
   * Undoes deployment `id` when it is still the script's current one: the row goes, and the script's
   * current deployment is `previousId` again (null: none). False when another deployment came meanwhile.
   */
  revertDeployment(accountId: string, script: string, id: string, previousId: string | null): Promise<boolean>;
  listDeployments(accountId: string, script: string): Promise<DeploymentRecord[]>;
  setWorkersDev(accountId: string, script: string, enabled: boolean, previews: boolean): Promise<void>;
  updateSettings(accountId: string, script: string, settings: ScriptSettings): Promise<void>;
  putSecret(accountId: string, script: string, name: string, text: string): Promise<void>;
  listSecretNames(accountId: string, script: string): Promise<string[]>;
  getSecrets(accountId: string, script: string): Promise<SecretRecord[]>;
  deleteSecret(accountId: string, script: string, name: string): Promise<boolean>;
  /** Sets and deletes several secrets in one transaction (secrets-bulk, settings PATCH). */
  applySecrets(
    accountId: string,
    script: string,
    put: { name: string; text: string }[],
    remove: string[],
  ): Promise<void>;
  getSubdomain(accountId: string): Promise<string | undefined>;
  subdomainOwner(subdomain: string): Promise<string | undefined>;
  /** False when another account has this subdomain. */
  setSubdomain(accountId: string, subdomain: string): Promise<boolean>;
  /** Drops the account's subdomain and remembers it was given up (so none is assigned on the next read). */
  releaseSubdomain(accountId: string): Promise<boolean>;
  isSubdomainReleased(accountId: string): Promise<boolean>;
  /** Every script with a current deployment, for the runtime configuration. */
  listDeployed(): Promise<{ script: ScriptRecord; version: VersionRecord }[]>;
}

/** The WorkerStore on the persistence contract, for both dialects. */
export class SqlWorkerStore implements WorkerStore {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, secretBox: SecretBox, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
    this.#box = secretBox;
  }

  async getScript(accountId: string, name: string) {
    const row = await this.#db.get<ScriptRow>('SELECT * FROM worker_scripts WHERE account_id = ? AND name = ?', [
      accountId,
      name,
    ]);
    return row && toScript(row);
  }

  async listScripts(accountId: string) {
    const rows = await this.#db.all<ScriptRow>('SELECT * FROM worker_scripts WHERE account_id = ? ORDER BY name', [
      accountId,
    ]);
    return rows.map(toScript);
  }

  async deleteScript(accountId: string, name: string) {
    return this.#db.transaction(async (tx) => {
      // Versions, deployments, secrets, schedules and cron runs go with the row (ON DELETE CASCADE); the shared
      // log history has no foreign key (lines outlive a redeploy), so it is cleared here.
      await tx.run('DELETE FROM worker_log_lines WHERE account_id = ? AND script_name = ?', [accountId, name]);
      const result = await tx.run('DELETE FROM worker_scripts WHERE account_id = ? AND name = ?', [accountId, name]);
      return result.changes > 0;
    });
  }

  async saveVersion(input: Parameters<WorkerStore['saveVersion']>[0]) {
    const { script, version, secrets, removeSecrets = [], deployment, durableObjects } = input;
    return this.#db.transaction(async (tx) => {
      // The upsert locks the script's row until commit (PostgreSQL), so two uploads of one script take
      // turns and number their versions 1, 2 rather than both 1.
      await tx.run(
        `INSERT INTO worker_scripts (account_id, name, tag, last_deployed_from, created_on, modified_on)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, name) DO UPDATE SET modified_on = excluded.modified_on, last_deployed_from = excluded.last_deployed_from`,
        [script.account_id, script.name, script.tag, script.last_deployed_from, script.created_on, script.modified_on],
      );
      const next = await tx.get<{ n: number }>(
        'SELECT COALESCE(MAX(number), 0) + 1 AS n FROM worker_versions WHERE account_id = ? AND script_name = ?',
        [script.account_id, script.name],
      );
      const stored: VersionRecord = { ...version, number: Number(next!.n) };
      await tx.run(
        `INSERT INTO worker_versions (id, account_id, script_name, number, main_module, modules, bindings, compatibility_date,
           compatibility_flags, cpu_ms, etag, source, author_email, created_on, assets) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          stored.id,
          stored.account_id,
          stored.script_name,
          stored.number,
          stored.main_module,
          JSON.stringify(stored.modules),
          JSON.stringify(stored.bindings),
          stored.compatibility_date,
          JSON.stringify(stored.compatibility_flags),
          stored.cpu_ms,
          stored.etag,
          stored.source,
          stored.author_email,
          stored.created_on,
          stored.assets ? JSON.stringify(stored.assets) : null,
        ],
      );
      for (const secret of secrets) await this.#putSecret(tx, script.account_id, script.name, secret.name, secret.text);
      for (const name of removeSecrets) await deleteSecret(tx, script.account_id, script.name, name);
      if (deployment) await addDeployment(tx, deployment);
      if (durableObjects) await writeScriptClasses(tx, script.account_id, script.name, durableObjects);
      return stored;
    });
  }

  async getVersion(accountId: string, script: string, id: string) {
    const row = await this.#db.get<VersionRow>(
      'SELECT * FROM worker_versions WHERE account_id = ? AND script_name = ? AND id = ?',
      [accountId, script, id],
    );
    return row && toVersion(row);
  }

  async listVersions(accountId: string, script: string) {
    const rows = await this.#db.all<VersionRow>(
      'SELECT * FROM worker_versions WHERE account_id = ? AND script_name = ? ORDER BY number DESC',
      [accountId, script],
    );
    return rows.map(toVersion);
  }

  async addDeployment(deployment: DeploymentRecord) {
    await this.#db.transaction((tx) => addDeployment(tx, deployment));
  }

  async getDeployment(id: string) {
    const row = await this.#db.get<DeploymentRow>(`SELECT ${DEPLOYMENT_COLUMNS} FROM worker_deployments WHERE id = ?`, [
      id,
    ]);
    return row && toDeployment(row);
  }

  async deleteDeployment(accountId: string, script: string, id: string) {
    const result = await this.#db.run(
      `DELETE FROM worker_deployments WHERE id = ? AND account_id = ? AND script_name = ?
         AND id NOT IN (SELECT current_deployment_id FROM worker_scripts
                         WHERE account_id = ? AND name = ? AND current_deployment_id IS NOT NULL)`,
      [id, accountId, script, accountId, script],
    );
    return result.changes > 0;
  }

  async revertDeployment(accountId: string, script: string, id: string, previousId: string | null) {
    return this.#db.transaction(async (tx) => {
      const moved = await tx.run(
        'UPDATE worker_scripts SET current_deployment_id = ? WHERE account_id = ? AND name = ? AND current_deployment_id = ?',
        [previousId, accountId, script, id],
      );
      if (moved.changes === 0) return false;
      await tx.run('DELETE FROM worker_deployments WHERE id = ? AND account_id = ? AND script_name = ?', [
        id,
        accountId,
        script,
      ]);
      return true;
    });
  }

  async listDeployments(accountId: string, script: string) {
    const rows = await this.#db.all<DeploymentRow>(
      `SELECT ${DEPLOYMENT_COLUMNS} FROM worker_deployments WHERE account_id = ? AND script_name = ?
        ORDER BY created_on DESC, seq DESC`,
      [accountId, script],
    );
    return rows.map(toDeployment);
  }

  async setWorkersDev(accountId: string, script: string, enabled: boolean, previews: boolean) {
    await this.#db.run(
      'UPDATE worker_scripts SET workers_dev = ?, previews_enabled = ? WHERE account_id = ? AND name = ?',
      [toSqlBool(enabled), toSqlBool(previews), accountId, script],
    );
  }

  async updateSettings(accountId: string, script: string, settings: ScriptSettings) {
    await this.#db.run('UPDATE worker_scripts SET settings = ? WHERE account_id = ? AND name = ?', [
      JSON.stringify(settings),
      accountId,
      script,
    ]);
  }

  async putSecret(accountId: string, script: string, name: string, text: string) {
    await this.#putSecret(this.#db, accountId, script, name, text);
  }

  async listSecretNames(accountId: string, script: string) {
    const rows = await this.#db.all<{ name: string }>(
      'SELECT name FROM worker_secrets WHERE account_id = ? AND script_name = ? ORDER BY name',
      [accountId, script],
    );
    return rows.map((r) => r.name);
  }

  async getSecrets(accountId: string, script: string): Promise<SecretRecord[]> {
    const rows = await this.#db.all<{ name: string; sealed: string }>(
      'SELECT name, sealed FROM worker_secrets WHERE account_id = ? AND script_name = ? ORDER BY name',
      [accountId, script],
    );
    return rows.map((r) => ({
      name: r.name,
      type: 'secret_text',
      text: this.#box.open(r.sealed, secretAad(accountId, script, r.name)),
    }));
  }

  deleteSecret(accountId: string, script: string, name: string) {
    return deleteSecret(this.#db, accountId, script, name);
  }

  async applySecrets(accountId: string, script: string, put: { name: string; text: string }[], remove: string[]) {
    await this.#db.transaction(async (tx) => {
      for (const secret of put) await this.#putSecret(tx, accountId, script, secret.name, secret.text);
      for (const name of remove) await deleteSecret(tx, accountId, script, name);
    });
  }

  async getSubdomain(accountId: string) {
    const row = await this.#db.get<{ subdomain: string }>(
      'SELECT subdomain FROM worker_account_subdomains WHERE account_id = ?',
      [accountId],
    );
    return row?.subdomain;
  }

  async subdomainOwner(subdomain: string) {
    const row = await this.#db.get<{ account_id: string }>(
      'SELECT account_id FROM worker_account_subdomains WHERE subdomain = ?',
      [subdomain],
    );
    return row?.account_id;
  }

  async setSubdomain(accountId: string, subdomain: string) {
    try {
      await this.#db.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO worker_account_subdomains (account_id, subdomain) VALUES (?, ?)
           ON CONFLICT (account_id) DO UPDATE SET subdomain = excluded.subdomain`,
          [accountId, subdomain],
        );
        await tx.run('DELETE FROM worker_released_subdomains WHERE account_id = ?', [accountId]);
      });
      return true;
    } catch (error) {
      // Another account holds (or just took) this subdomain: the unique constraint decides the race.
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async releaseSubdomain(accountId: string) {
    return this.#db.transaction(async (tx) => {
      const deleted = await tx.run('DELETE FROM worker_account_subdomains WHERE account_id = ?', [accountId]);
      if (deleted.changes === 0) return false;
      await tx.run(
        'INSERT INTO worker_released_subdomains (account_id) VALUES (?) ON CONFLICT (account_id) DO NOTHING',
        [accountId],
      );
      return true;
    });
  }

  async isSubdomainReleased(accountId: string) {
    const row = await this.#db.get('SELECT 1 AS one FROM worker_released_subdomains WHERE account_id = ?', [accountId]);
    return row !== undefined;
  }

  async listDeployed() {
    const rows = await this.#db.all<ScriptRow & DeployedRow>(
      `SELECT s.*, ${DEPLOYED_VERSION_COLUMNS}
       FROM worker_scripts s
       JOIN worker_deployments d ON d.id = s.current_deployment_id
       JOIN worker_versions v ON v.id = d.version_id
       ORDER BY s.account_id, s.name`,
    );
    return rows.map((row) => ({ script: toScript(row), version: toVersion(fromDeployedVersion(row)) }));
  }

  #putSecret(db: SqlExecutor, accountId: string, script: string, name: string, text: string) {
    const now = isoNow(this.#clock);
    return db.run(
      `INSERT INTO worker_secrets (account_id, script_name, name, type, sealed, created_on, modified_on) VALUES (?, ?, ?, 'secret_text', ?, ?, ?)
       ON CONFLICT (account_id, script_name, name) DO UPDATE SET sealed = excluded.sealed, modified_on = excluded.modified_on`,
      [accountId, script, name, this.#box.seal(text, secretAad(accountId, script, name)), now, now],
    );
  }
}

/** A deployment's columns (not `seq`, which only orders them). */
const DEPLOYMENT_COLUMNS = 'id, account_id, script_name, version_id, source, author_email, annotations, created_on';

async function deleteSecret(db: SqlExecutor, accountId: string, script: string, name: string): Promise<boolean> {
  const result = await db.run('DELETE FROM worker_secrets WHERE account_id = ? AND script_name = ? AND name = ?', [
    accountId,
    script,
    name,
  ]);
  return result.changes > 0;
}

/** Records a deployment and makes it the script's current one, in the caller's transaction. */
async function addDeployment(tx: SqlExecutor, d: DeploymentRecord): Promise<void> {
  // The script's row first: locked until commit (PostgreSQL), so the sequence below is the script's next.
  await tx.run(
    'UPDATE worker_scripts SET current_deployment_id = ?, modified_on = ? WHERE account_id = ? AND name = ?',
    [d.id, d.created_on, d.account_id, d.script_name],
  );
  await tx.run(
    `INSERT INTO worker_deployments (id, account_id, script_name, version_id, source, author_email, annotations, created_on, seq)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?,
       (SELECT COALESCE(MAX(seq), 0) + 1 FROM worker_deployments WHERE account_id = ? AND script_name = ?))`,
    [
      d.id,
      d.account_id,
      d.script_name,
      d.version_id,
      d.source,
      d.author_email,
      JSON.stringify(d.annotations),
      d.created_on,
      d.account_id,
      d.script_name,
    ],
  );
}

/** Binds each ciphertext to its owner so a sealed value cannot be moved to another script or name. */
function secretAad(accountId: string, script: string, name: string): string {
  return `worker-secret:${accountId}/${script}/${name}`;
}
