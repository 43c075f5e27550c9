import type { TransactionScope } from '../db/index.ts';
import type { AlertStateStore } from './alert-state-store.ts';
import type { HealthEvent } from '../load-balancing/index.ts';
import { LOAD_BALANCING_HEALTH_ALERT } from './alert-types.ts';
import type { Outbox } from './outbox.ts';
import { DEPRECATION_SUBJECT, describeEvent, legacyAlertEmail } from './payload.ts';

export const LEGACY_POLICY_NAME = 'Legacy pool notification_email';
export const DEPRECATION_POLICY_NAME = 'notification_email deprecation notice';
export const DEFAULT_DEPRECATION_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The pool's notification_email field: comma-separated addresses, "" = none. */
export function legacyAddresses(field: string): string[] {
  return [
    ...new Set(
      field
        .split(',')
        .map((address) => address.trim())
        .filter((address) => address !== ''),
    ),
  ];
}

/**
 * The deprecated per-pool email path. A health event on a pool with a legacy address mails the alert there,
 * plus a deprecation notice (at most one per address per interval). Whether any pool of the account still
 * keeps a legacy email is checked when the notice is sent (see the dispatcher), so a notice queued just
 * before the account finished migrating is dropped rather than sent.
 */
export class LegacyEmailPath {
  readonly #state: AlertStateStore;
  readonly #outbox: Outbox;
  readonly #noticeIntervalMs: number;

  constructor(state: AlertStateStore, outbox: Outbox, noticeIntervalMs: number) {
    this.#state = state;
    this.#outbox = outbox;
    this.#noticeIntervalMs = noticeIntervalMs;
  }

  /** Writes the legacy rows for one event, in its transaction; returns how many. */
  async handle(scope: TransactionScope, event: HealthEvent, nowMs: number): Promise<number> {
    const addresses = legacyAddresses(event.legacyNotificationEmail);
    if (addresses.length === 0) return 0;
    const base = {
      accountId: event.accountId,
      eventId: event.id,
      eventMs: Date.parse(event.occurredAt),
      policyId: null,
      alertType: LOAD_BALANCING_HEALTH_ALERT,
      mechanismType: 'email' as const,
    };
    let written = 0;
    for (const address of addresses) {
      const payload = JSON.stringify(legacyAlertEmail(address, event));
      const messageId = await this.#outbox.saveMessage(scope.tx, payload);
      await this.#outbox.append(
        scope,
        {
          ...base,
          kind: 'legacy_alert',
          policyName: LEGACY_POLICY_NAME,
          description: describeEvent(event),
          messageId,
          payload,
        },
        [address],
        nowMs,
      );
      written++;
    }
    // The notice text is written at send time, with the number of pools still to migrate then.
    const noticeTo: string[] = [];
    for (const address of addresses) {
      if (await this.#state.takeNoticeSlot(scope.tx, event.accountId, address, nowMs, this.#noticeIntervalMs))
        noticeTo.push(address);
    }
    await this.#outbox.append(
      scope,
      {
        ...base,
        kind: 'deprecation_notice',
        policyName: DEPRECATION_POLICY_NAME,
        description: DEPRECATION_SUBJECT,
        messageId: null,
        payload: '',
      },
      noticeTo,
      nowMs,
    );
    return written + noticeTo.length;
  }
}
