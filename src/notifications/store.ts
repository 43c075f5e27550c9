import { fromSqlBool, toSqlBool, type Database } from '../db/index.ts';
import type { Policy, Webhook } from './types.ts';

/** Persistence of policies and webhook destinations. Async so another backend can replace it. */
export interface NotificationStore {
  insertPolicy(policy: Policy): Promise<void>;
  updatePolicy(policy: Policy): Promise<void>;
  getPolicy(accountId: string, id: string): Promise<Policy | undefined>;
  listPolicies(accountId: string): Promise<Policy[]>;
  deletePolicy(accountId: string, id: string): Promise<boolean>;
  insertWebhook(webhook: Webhook): Promise<void>;
  updateWebhook(webhook: Webhook): Promise<void>;
  getWebhook(accountId: string, id: string): Promise<Webhook | undefined>;
  listWebhooks(accountId: string): Promise<Webhook[]>;
  deleteWebhook(accountId: string, id: string): Promise<boolean>;
  /** Names of the policies that deliver to a webhook (deleting it would silently drop their alerts). */
  policiesUsingWebhook(accountId: string, webhookId: string): Promise<string[]>;
}

interface PolicyRow {
  id: string;
  account_id: string;
  name: string;
  description: string;
  enabled: number;
  alert_type: string;
  mechanisms: string;
  filters: string;
  alert_interval: string | null;
  created: string;
  modified: string;
}

export function policyFromRow(row: PolicyRow): Policy {
  return {
    ...row,
    enabled: fromSqlBool(row.enabled),
    mechanisms: JSON.parse(row.mechanisms) as Policy['mechanisms'],
    filters: JSON.parse(row.filters) as Policy['filters'],
  };
}

export type { PolicyRow };

export class SqliteNotificationStore implements NotificationStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async insertPolicy(policy: Policy): Promise<void> {
    this.#db.run(
      `INSERT INTO notification_policies
         (id, account_id, name, description, enabled, alert_type, mechanisms, filters, alert_interval, created, modified)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        policy.id,
        policy.account_id,
        policy.name,
        policy.description,
        toSqlBool(policy.enabled),
        policy.alert_type,
        JSON.stringify(policy.mechanisms),
        JSON.stringify(policy.filters),
        policy.alert_interval,
        policy.created,
        policy.modified,
      ],
    );
  }

  async updatePolicy(policy: Policy): Promise<void> {
    this.#db.run(
      `UPDATE notification_policies SET name = ?, description = ?, enabled = ?, alert_type = ?, mechanisms = ?,
         filters = ?, alert_interval = ?, modified = ? WHERE id = ? AND account_id = ?`,
      [
        policy.name,
        policy.description,
        toSqlBool(policy.enabled),
        policy.alert_type,
        JSON.stringify(policy.mechanisms),
        JSON.stringify(policy.filters),
        policy.alert_interval,
        policy.modified,
        policy.id,
        policy.account_id,
      ],
    );
  }

  async getPolicy(accountId: string, id: string): Promise<Policy | undefined> {
    const row = this.#db.get<PolicyRow>('SELECT * FROM notification_policies WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return row ? policyFromRow(row) : undefined;
  }

  async listPolicies(accountId: string): Promise<Policy[]> {
    return this.#db
      .all<PolicyRow>('SELECT * FROM notification_policies WHERE account_id = ? ORDER BY created, id', [accountId])
      .map(policyFromRow);
  }

  async deletePolicy(accountId: string, id: string): Promise<boolean> {
    return (
      this.#db.run('DELETE FROM notification_policies WHERE id = ? AND account_id = ?', [id, accountId]).changes > 0
    );
  }

  async insertWebhook(webhook: Webhook): Promise<void> {
    this.#db.run(
      `INSERT INTO notification_webhooks (id, account_id, name, url, type, secret_sealed, created_at, last_success, last_failure)
       VALUES (:id, :account_id, :name, :url, :type, :secret_sealed, :created_at, :last_success, :last_failure)`,
      { ...webhook },
    );
  }

  async updateWebhook(webhook: Webhook): Promise<void> {
    this.#db.run(
      'UPDATE notification_webhooks SET name = ?, url = ?, type = ?, secret_sealed = ? WHERE id = ? AND account_id = ?',
      [webhook.name, webhook.url, webhook.type, webhook.secret_sealed, webhook.id, webhook.account_id],
    );
  }

  async getWebhook(accountId: string, id: string): Promise<Webhook | undefined> {
    return this.#db.get<Webhook>('SELECT * FROM notification_webhooks WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
  }

  async listWebhooks(accountId: string): Promise<Webhook[]> {
    return this.#db.all<Webhook>('SELECT * FROM notification_webhooks WHERE account_id = ? ORDER BY created_at, id', [
      accountId,
    ]);
  }

  async deleteWebhook(accountId: string, id: string): Promise<boolean> {
    return (
      this.#db.run('DELETE FROM notification_webhooks WHERE id = ? AND account_id = ?', [id, accountId]).changes > 0
    );
  }

  async policiesUsingWebhook(accountId: string, webhookId: string): Promise<string[]> {
    const rows = this.#db.all<{ name: string; mechanisms: string }>(
      'SELECT name, mechanisms FROM notification_policies WHERE account_id = ?',
      [accountId],
    );
    return rows
      .filter((row) => (JSON.parse(row.mechanisms) as Policy['mechanisms']).webhooks?.some((w) => w.id === webhookId))
      .map((row) => row.name);
  }
}
