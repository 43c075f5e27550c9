import { describeRefusal } from '../egress/index.ts';
import { isoNow } from '../shared/time.ts';
import { newId } from '../shared/ids.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { NotificationErrors } from './errors.ts';
import type { WebhookInput } from './schemas.ts';
import type { NotificationStore } from './store.ts';
import type { Webhook } from './types.ts';
import type { WebhookSender } from './webhook-sender.ts';
import { openWebhookSecret, sealWebhookSecret } from './webhook-secret.ts';
import { webhookTypeOf } from './webhook-type.ts';
import { currentRequestId } from '../shared/request-context.ts';
import type { Clock } from '../shared/clock.ts';

export const TEST_MESSAGE_TEXT =
  'Hello World! This is a test message sent from Ledge to verify your webhook destination.';

/** The API's view of a destination: everything but the secret. */
export function renderWebhook(webhook: Webhook) {
  return {
    id: webhook.id,
    name: webhook.name,
    url: webhook.url,
    type: webhook.type,
    created_at: webhook.created_at,
    // Absent rather than null when it never happened: the SDK types both optional strings.
    ...(webhook.last_success ? { last_success: webhook.last_success } : {}),
    ...(webhook.last_failure ? { last_failure: webhook.last_failure } : {}),
  };
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw NotificationErrors.invalidUrl(`"${raw}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw NotificationErrors.invalidUrl('must be an http:// or https:// URL');
  return url;
}

/**
 * Webhook destinations. Creating or changing one first POSTs the test message to the URL (with the secret
 * header) and refuses the destination when the receiver does not answer 2xx, so a typo never becomes a
 * destination that silently drops alerts.
 */
export class WebhookDestinations {
  readonly #store: NotificationStore;
  readonly #sender: WebhookSender;
  readonly #secretBox: SecretBox;

  readonly #clock: Clock;

  constructor(deps: { store: NotificationStore; sender: WebhookSender; secretBox: SecretBox }, clock: Clock) {
    this.#clock = clock;
    this.#store = deps.store;
    this.#sender = deps.sender;
    this.#secretBox = deps.secretBox;
  }

  async create(accountId: string, input: WebhookInput): Promise<Webhook> {
    const url = parseUrl(input.url);
    await this.#sendTestMessage(url, input.secret);
    const id = newId();
    const now = isoNow(this.#clock);
    const webhook: Webhook = {
      id,
      account_id: accountId,
      name: input.name,
      url: url.toString(),
      type: webhookTypeOf(url),
      secret_sealed: sealWebhookSecret(this.#secretBox, id, input.secret),
      created_at: now,
      last_success: now,
      last_failure: null,
    };
    await this.#store.insertWebhook(webhook);
    return webhook;
  }

  async update(accountId: string, id: string, input: WebhookInput): Promise<Webhook> {
    const existing = await this.get(accountId, id);
    const url = parseUrl(input.url);
    // An update that omits the secret keeps the stored one, so the test message is signed with that one:
    // the receiver checks cf-webhook-auth on every message, the test included.
    const secret = input.secret ?? openWebhookSecret(this.#secretBox, existing) ?? undefined;
    await this.#sendTestMessage(url, secret);
    const updated: Webhook = {
      ...existing,
      name: input.name,
      url: url.toString(),
      type: webhookTypeOf(url),
      // Omitting the secret keeps the current one (it cannot be read back to resend it).
      secret_sealed:
        input.secret === undefined ? existing.secret_sealed : sealWebhookSecret(this.#secretBox, id, input.secret),
    };
    await this.#store.updateWebhook(updated);
    return updated;
  }

  async get(accountId: string, id: string): Promise<Webhook> {
    const webhook = await this.#store.getWebhook(accountId, id);
    if (!webhook) throw NotificationErrors.webhookNotFound(id);
    return webhook;
  }

  list(accountId: string): Promise<Webhook[]> {
    return this.#store.listWebhooks(accountId);
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.get(accountId, id);
    const users = await this.#store.policiesUsingWebhook(accountId, id);
    if (users.length > 0) throw NotificationErrors.webhookInUse(id, users);
    await this.#store.deleteWebhook(accountId, id);
  }

  /**
   * A URL the egress policy refuses is a 400 before anything is sent; the sender checks again when it
   * connects (a name may resolve elsewhere by then). The send has a total deadline (WebhookSender), and
   * a failure says what happened (status, timeout, connection error), never what the receiver answered.
   */
  async #sendTestMessage(url: URL, secret: string | undefined): Promise<void> {
    const refusal = await this.#sender.checkUrl(url);
    if (refusal) throw NotificationErrors.invalidUrl(describeRefusal(refusal));
    const result = await this.#sender.send(
      url.toString(),
      JSON.stringify({ text: TEST_MESSAGE_TEXT }),
      secret ?? null,
      currentRequestId(),
    );
    if (result.ok) return;
    // "answered HTTP 500" when there was an answer; else what went wrong (timeout, connection error).
    const what = result.status !== null ? `answered HTTP ${result.status}` : `failed: ${result.error ?? 'no answer'}`;
    throw NotificationErrors.webhookTestFailed(`${url.toString()} ${what}`);
  }
}
