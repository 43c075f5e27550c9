import type { Database } from '../db/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { openWebhookSecret } from './webhook-secret.ts';

export interface WebhookTarget {
  id: string;
  url: string;
  secret: string | null;
}

/**
 * Looks up where a batch of webhook deliveries goes. One query per distinct webhook per batch (a batch
 * holds many deliveries to the same few destinations), and decrypted secrets are memoised by their
 * sealed value, so a changed secret is picked up at once while an unchanged one is decrypted only once.
 */
export class WebhookTargets {
  readonly #db: Database;
  readonly #secretBox: SecretBox;
  readonly #opened = new Map<string, string>();

  constructor(db: Database, secretBox: SecretBox) {
    this.#db = db;
    this.#secretBox = secretBox;
  }

  /** Targets by webhook id for the given ids; a deleted webhook maps to undefined. */
  resolve(accountAndIds: Iterable<{ accountId: string; webhookId: string }>): Map<string, WebhookTarget | undefined> {
    const targets = new Map<string, WebhookTarget | undefined>();
    for (const { accountId, webhookId } of accountAndIds) {
      if (targets.has(webhookId)) continue;
      const row = this.#db.get<{ id: string; url: string; secret_sealed: string | null }>(
        'SELECT id, url, secret_sealed FROM notification_webhooks WHERE id = ? AND account_id = ?',
        [webhookId, accountId],
      );
      targets.set(webhookId, row ? { id: row.id, url: row.url, secret: this.#secret(row) } : undefined);
    }
    return targets;
  }

  #secret(row: { id: string; secret_sealed: string | null }): string | null {
    if (!row.secret_sealed) return null;
    let secret = this.#opened.get(row.secret_sealed);
    if (secret === undefined) {
      if (this.#opened.size > 10_000) this.#opened.clear();
      secret = openWebhookSecret(this.#secretBox, row) ?? '';
      this.#opened.set(row.secret_sealed, secret);
    }
    return secret;
  }
}
