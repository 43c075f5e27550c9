import type { SecretBox } from '../shared/crypto.ts';

// Sealed with the webhook id as associated data, so a sealed value cannot be moved to another webhook's row.
const aad = (webhookId: string) => `webhook:${webhookId}`;

export function sealWebhookSecret(box: SecretBox, webhookId: string, secret: string | undefined): string | null {
  return secret ? box.seal(secret, aad(webhookId)) : null;
}

export function openWebhookSecret(
  box: SecretBox,
  webhook: { id: string; secret_sealed: string | null },
): string | null {
  return webhook.secret_sealed ? box.open(webhook.secret_sealed, aad(webhook.id)) : null;
}
