import { fromSqlBool, toSqlBool, type SqlDatabase, type SqlExecutor } from '../db/index.ts';
import type { Policy, Webhook } from './types.ts';

/** Where a webhook delivery goes, as stored (the secret still sealed). */
export interface WebhookTargetRow {
  id: string;
  url: string;
  secret_sealed: string | null;
}

/** Persistence of policies and webhook destinations (see SqlNotificationStore). */
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
  /** The account's enabled policies of one alert type, as stored; read in the fan-out's transaction. */
  enabledPolicyRows(tx: SqlExecutor, accountId: string, alertType: string): Promise<PolicyRow[]>;
  /** Where each webhook of a batch of deliveries goes; a deleted webhook is missing from the map. */
  webhookTargets(
    accountAndIds: readonly { accountId: string; webhookId: string }[],
  ): Promise<Map<string, WebhookTargetRow>>;
  /** Records the outcome of each webhook's latest attempt (last_success or last_failure = `at`). */
  markWebhookOutcomes(tx: SqlExecutor, outcomes: ReadonlyMap<string, boolean>, at: string): Promise<void>;
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

/** Policies and webhooks on either dialect; mechanisms and filters are JSON text. */
export class SqlNotificationStore implements NotificationStore {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async insertPolicy(policy: Policy): Promise<void> {
    await this.#db.run(
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
    await this.#db.run(
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
    const row = await this.#db.get<PolicyRow>('SELECT * FROM notification_policies WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return row ? policyFromRow(row) : undefined;
  }

  async listPolicies(accountId: string): Promise<Policy[]> {
    const rows = await this.#db.all<PolicyRow>(
      'SELECT * FROM notification_policies WHERE account_id = ? ORDER BY created, id',
      [accountId],
    );
    return rows.map(policyFromRow);
  }

  async deletePolicy(accountId: string, id: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM notification_policies WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return result.changes > 0;
  }

  async insertWebhook(webhook: Webhook): Promise<void> {
    await this.#db.run(
      `INSERT INTO notification_webhooks (id, account_id, name, url, type, secret_sealed, created_at, last_success, last_failure)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        webhook.id,
        webhook.account_id,
        webhook.name,
        webhook.url,
        webhook.type,
        webhook.secret_sealed,
        webhook.created_at,
        webhook.last_success,
        webhook.last_failure,
      ],
    );
  }

  async updateWebhook(webhook: Webhook): Promise<void> {
    await this.#db.run(
      'UPDATE notification_webhooks SET name = ?, url = ?, type = ?, secret_sealed = ? WHERE id = ? AND account_id = ?',
      [webhook.name, webhook.url, webhook.type, webhook.secret_sealed, webhook.id, webhook.account_id],
    );
  }

  async getWebhook(accountId: string, id: string): Promise<Webhook | undefined> {
    return await this.#db.get<Webhook>('SELECT * FROM notification_webhooks WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
  }

  async listWebhooks(accountId: string): Promise<Webhook[]> {
    return await this.#db.all<Webhook>(
      'SELECT * FROM notification_webhooks WHERE account_id = ? ORDER BY created_at, id',
      [accountId],
    );
  }

  async deleteWebhook(accountId: string, id: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM notification_webhooks WHERE id = ? AND account_id = ?', [
      id,
      accountId,
    ]);
    return result.changes > 0;
  }

  async policiesUsingWebhook(accountId: string, webhookId: string): Promise<string[]> {
    const rows = await this.#db.all<{ name: string; mechanisms: string }>(
      'SELECT name, mechanisms FROM notification_policies WHERE account_id = ?',
      [accountId],
    );
    return rows
      .filter((row) => (JSON.parse(row.mechanisms) as Policy['mechanisms']).webhooks?.some((w) => w.id === webhookId))
      .map((row) => row.name);
  }

  enabledPolicyRows(tx: SqlExecutor, accountId: string, alertType: string): Promise<PolicyRow[]> {
    return tx.all<PolicyRow>(
      'SELECT * FROM notification_policies WHERE account_id = ? AND alert_type = ? AND enabled = 1',
      [accountId, alertType],
    );
  }

  async webhookTargets(
    accountAndIds: readonly { accountId: string; webhookId: string }[],
  ): Promise<Map<string, WebhookTargetRow>> {
    const targets = new Map<string, WebhookTargetRow>();
    const seen = new Set<string>();
    // One query per distinct webhook: a batch holds many deliveries to the same few destinations.
    for (const { accountId, webhookId } of accountAndIds) {
      if (seen.has(webhookId)) continue;
      seen.add(webhookId);
      const row = await this.#db.get<WebhookTargetRow>(
        'SELECT id, url, secret_sealed FROM notification_webhooks WHERE id = ? AND account_id = ?',
        [webhookId, accountId],
      );
      if (row) targets.set(webhookId, row);
    }
    return targets;
  }

  async markWebhookOutcomes(tx: SqlExecutor, outcomes: ReadonlyMap<string, boolean>, at: string): Promise<void> {
    // In id order: two transactions (two flushes, two nodes) then lock the same rows in the same order
    // and wait for each other instead of deadlocking.
    for (const [id, ok] of [...outcomes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      await tx.run(`UPDATE notification_webhooks SET ${ok ? 'last_success' : 'last_failure'} = ? WHERE id = ?`, [
        at,
        id,
      ]);
    }
  }
}
