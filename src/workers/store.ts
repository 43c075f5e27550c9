import type { Database } from '../db/index.ts';
import { toSqlBool } from '../db/index.ts';
import {
  toDeployment,
  toScript,
  toVersion,
  type DeploymentRow,
  type ScriptRow,
  type VersionRow,
} from './store-rows.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { DeploymentRecord, ScriptRecord, ScriptSettings, SecretRecord, VersionRecord } from './types.ts';

/** Persistence of scripts, versions, deployments, secrets and subdomains (async, so PostgreSQL can follow). */
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
  }): Promise<VersionRecord>;
  getVersion(accountId: string, script: string, id: string): Promise<VersionRecord | undefined>;
  listVersions(accountId: string, script: string): Promise<VersionRecord[]>;
  addDeployment(deployment: DeploymentRecord): Promise<void>;
  getDeployment(id: string): Promise<DeploymentRecord | undefined>;
  /** Removes a deployment that is not the script's current one; false when there is none such. */
  deleteDeployment(accountId: string, script: string, id: string): Promise<boolean>;
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
  setSubdomain(accountId: string, subdomain: string): Promise<void>;
  /** Drops the account's subdomain and remembers it was given up (so none is assigned on the next read). */
  releaseSubdomain(accountId: string): Promise<boolean>;
  isSubdomainReleased(accountId: string): Promise<boolean>;
  /** Every script with a current deployment, for the runtime configuration. */
  listDeployed(): Promise<{ script: ScriptRecord; version: VersionRecord }[]>;
}

export class SqliteWorkerStore implements WorkerStore {
  readonly #db: Database;
  readonly #box: SecretBox;

  constructor(db: Database, secretBox: SecretBox) {
    this.#db = db;
    this.#box = secretBox;
  }

  async getScript(accountId: string, name: string) {
    const row = this.#db.get<ScriptRow>('SELECT * FROM worker_scripts WHERE account_id = ? AND name = ?', [
      accountId,
      name,
    ]);
    return row && toScript(row);
  }

  async listScripts(accountId: string) {
    return this.#db
      .all<ScriptRow>('SELECT * FROM worker_scripts WHERE account_id = ? ORDER BY name', [accountId])
      .map(toScript);
  }

  async deleteScript(accountId: string, name: string) {
    return this.#db.run('DELETE FROM worker_scripts WHERE account_id = ? AND name = ?', [accountId, name]).changes > 0;
  }

  async saveVersion(input: Parameters<WorkerStore['saveVersion']>[0]) {
    const { script, version, secrets, removeSecrets = [], deployment } = input;
    return this.#db.transaction(() => {
      this.#db.run(
        `INSERT INTO worker_scripts (account_id, name, tag, last_deployed_from, created_on, modified_on)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, name) DO UPDATE SET modified_on = excluded.modified_on, last_deployed_from = excluded.last_deployed_from`,
        [script.account_id, script.name, script.tag, script.last_deployed_from, script.created_on, script.modified_on],
      );
      const next = this.#db.get<{ n: number }>(
        'SELECT COALESCE(MAX(number), 0) + 1 AS n FROM worker_versions WHERE account_id = ? AND script_name = ?',
        [script.account_id, script.name],
      )!.n;
      const stored: VersionRecord = { ...version, number: next };
      this.#db.run(
        `INSERT INTO worker_versions (id, account_id, script_name, number, main_module, modules, bindings, compatibility_date,
           compatibility_flags, cpu_ms, etag, source, author_email, created_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
        ],
      );
      for (const secret of secrets) this.#putSecretSync(script.account_id, script.name, secret.name, secret.text);
      for (const name of removeSecrets) this.#deleteSecretSync(script.account_id, script.name, name);
      if (deployment) this.#addDeploymentSync(deployment);
      return stored;
    });
  }

  async getVersion(accountId: string, script: string, id: string) {
    const row = this.#db.get<VersionRow>(
      'SELECT * FROM worker_versions WHERE account_id = ? AND script_name = ? AND id = ?',
      [accountId, script, id],
    );
    return row && toVersion(row);
  }

  async listVersions(accountId: string, script: string) {
    return this.#db
      .all<VersionRow>('SELECT * FROM worker_versions WHERE account_id = ? AND script_name = ? ORDER BY number DESC', [
        accountId,
        script,
      ])
      .map(toVersion);
  }

  async addDeployment(deployment: DeploymentRecord) {
    this.#db.transaction(() => this.#addDeploymentSync(deployment));
  }

  async getDeployment(id: string) {
    const row = this.#db.get<DeploymentRow>('SELECT * FROM worker_deployments WHERE id = ?', [id]);
    return row && toDeployment(row);
  }

  async deleteDeployment(accountId: string, script: string, id: string) {
    return (
      this.#db.run(
        `DELETE FROM worker_deployments WHERE id = ? AND account_id = ? AND script_name = ?
           AND id NOT IN (SELECT current_deployment_id FROM worker_scripts
                           WHERE account_id = ? AND name = ? AND current_deployment_id IS NOT NULL)`,
        [id, accountId, script, accountId, script],
      ).changes > 0
    );
  }

  async listDeployments(accountId: string, script: string) {
    return this.#db
      .all<DeploymentRow>(
        'SELECT * FROM worker_deployments WHERE account_id = ? AND script_name = ? ORDER BY created_on DESC, rowid DESC',
        [accountId, script],
      )
      .map(toDeployment);
  }

  async setWorkersDev(accountId: string, script: string, enabled: boolean, previews: boolean) {
    this.#db.run('UPDATE worker_scripts SET workers_dev = ?, previews_enabled = ? WHERE account_id = ? AND name = ?', [
      toSqlBool(enabled),
      toSqlBool(previews),
      accountId,
      script,
    ]);
  }

  async updateSettings(accountId: string, script: string, settings: ScriptSettings) {
    this.#db.run('UPDATE worker_scripts SET settings = ? WHERE account_id = ? AND name = ?', [
      JSON.stringify(settings),
      accountId,
      script,
    ]);
  }

  async putSecret(accountId: string, script: string, name: string, text: string) {
    this.#putSecretSync(accountId, script, name, text);
  }

  async listSecretNames(accountId: string, script: string) {
    return this.#db
      .all<{ name: string }>('SELECT name FROM worker_secrets WHERE account_id = ? AND script_name = ? ORDER BY name', [
        accountId,
        script,
      ])
      .map((r) => r.name);
  }

  async getSecrets(accountId: string, script: string): Promise<SecretRecord[]> {
    return this.#db
      .all<{ name: string; sealed: string }>(
        'SELECT name, sealed FROM worker_secrets WHERE account_id = ? AND script_name = ? ORDER BY name',
        [accountId, script],
      )
      .map((r) => ({
        name: r.name,
        type: 'secret_text',
        text: this.#box.open(r.sealed, secretAad(accountId, script, r.name)),
      }));
  }

  async deleteSecret(accountId: string, script: string, name: string) {
    return this.#deleteSecretSync(accountId, script, name);
  }

  async applySecrets(accountId: string, script: string, put: { name: string; text: string }[], remove: string[]) {
    this.#db.transaction(() => {
      for (const secret of put) this.#putSecretSync(accountId, script, secret.name, secret.text);
      for (const name of remove) this.#deleteSecretSync(accountId, script, name);
    });
  }

  async getSubdomain(accountId: string) {
    return this.#db.get<{ subdomain: string }>('SELECT subdomain FROM worker_account_subdomains WHERE account_id = ?', [
      accountId,
    ])?.subdomain;
  }

  async subdomainOwner(subdomain: string) {
    return this.#db.get<{ account_id: string }>(
      'SELECT account_id FROM worker_account_subdomains WHERE subdomain = ?',
      [subdomain],
    )?.account_id;
  }

  async setSubdomain(accountId: string, subdomain: string) {
    this.#db.transaction(() => {
      this.#db.run(
        `INSERT INTO worker_account_subdomains (account_id, subdomain) VALUES (?, ?)
         ON CONFLICT (account_id) DO UPDATE SET subdomain = excluded.subdomain`,
        [accountId, subdomain],
      );
      this.#db.run('DELETE FROM worker_released_subdomains WHERE account_id = ?', [accountId]);
    });
  }

  async releaseSubdomain(accountId: string) {
    return this.#db.transaction(() => {
      const deleted = this.#db.run('DELETE FROM worker_account_subdomains WHERE account_id = ?', [accountId]).changes;
      if (deleted === 0) return false;
      this.#db.run('INSERT OR IGNORE INTO worker_released_subdomains (account_id) VALUES (?)', [accountId]);
      return true;
    });
  }

  async isSubdomainReleased(accountId: string) {
    return (
      this.#db.get<{ n: number }>('SELECT 1 AS n FROM worker_released_subdomains WHERE account_id = ?', [accountId]) !==
      undefined
    );
  }

  async listDeployed() {
    const rows = this.#db.all<ScriptRow & { version_row: string }>(
      `SELECT s.*, json_object('id', v.id, 'account_id', v.account_id, 'script_name', v.script_name, 'number', v.number,
         'main_module', v.main_module, 'modules', v.modules, 'bindings', v.bindings, 'compatibility_date', v.compatibility_date,
         'compatibility_flags', v.compatibility_flags, 'cpu_ms', v.cpu_ms, 'etag', v.etag, 'source', v.source, 'author_email', v.author_email,
         'created_on', v.created_on) AS version_row
       FROM worker_scripts s
       JOIN worker_deployments d ON d.id = s.current_deployment_id
       JOIN worker_versions v ON v.id = d.version_id
       ORDER BY s.account_id, s.name`,
    );
    return rows.map((row) => ({
      script: toScript(row),
      version: toVersion(JSON.parse(row.version_row) as VersionRow),
    }));
  }

  #putSecretSync(accountId: string, script: string, name: string, text: string) {
    const now = new Date().toISOString();
    this.#db.run(
      `INSERT INTO worker_secrets (account_id, script_name, name, type, sealed, created_on, modified_on) VALUES (?, ?, ?, 'secret_text', ?, ?, ?)
       ON CONFLICT (account_id, script_name, name) DO UPDATE SET sealed = excluded.sealed, modified_on = excluded.modified_on`,
      [accountId, script, name, this.#box.seal(text, secretAad(accountId, script, name)), now, now],
    );
  }

  #deleteSecretSync(accountId: string, script: string, name: string): boolean {
    return (
      this.#db.run('DELETE FROM worker_secrets WHERE account_id = ? AND script_name = ? AND name = ?', [
        accountId,
        script,
        name,
      ]).changes > 0
    );
  }

  #addDeploymentSync(d: DeploymentRecord) {
    this.#db.run(
      `INSERT INTO worker_deployments (id, account_id, script_name, version_id, source, author_email, annotations, created_on)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        d.id,
        d.account_id,
        d.script_name,
        d.version_id,
        d.source,
        d.author_email,
        JSON.stringify(d.annotations),
        d.created_on,
      ],
    );
    this.#db.run(
      'UPDATE worker_scripts SET current_deployment_id = ?, modified_on = ? WHERE account_id = ? AND name = ?',
      [d.id, d.created_on, d.account_id, d.script_name],
    );
  }
}

/** Binds each ciphertext to its owner so a sealed value cannot be moved to another script or name. */
function secretAad(accountId: string, script: string, name: string): string {
  return `worker-secret:${accountId}/${script}/${name}`;
}
