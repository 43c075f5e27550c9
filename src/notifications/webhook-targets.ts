import type { SecretBox } from '../shared/crypto.ts';
import type { NotificationStore } from './store.ts';
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
  readonly #store: NotificationStore;
  readonly #secretBox: SecretBox;
  readonly #opened = new Map<string, string>();

  constructor(store: NotificationStore, secretBox: SecretBox) {
    this.#store = store;
    this.#secretBox = secretBox;
  }

  /** Targets by webhook id for the given ids; a deleted webhook maps to undefined. */
  async resolve(
    accountAndIds: readonly { accountId: string; webhookId: string }[],
  ): Promise<Map<string, WebhookTarget | undefined>> {
    const rows = await this.#store.webhookTargets(accountAndIds);
    const targets = new Map<string, WebhookTarget | undefined>();
    for (const { webhookId } of accountAndIds) {
      const row = rows.get(webhookId);
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
