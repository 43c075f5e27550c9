import type { HealthEvent } from '../load-balancing/index.ts';
import type { PoolEnablementEvent } from '../load-balancing/index.ts';
import { newId } from '../shared/ids.ts';
import { LOAD_BALANCING_HEALTH_ALERT, LOAD_BALANCING_POOL_ENABLEMENT_ALERT } from './alert-types.ts';
import type { MailContent } from './mail.ts';

/** What a health event looks like to a human, in one line. */
export function describeEvent(event: HealthEvent): string {
  const subject =
    event.eventSource === 'origin'
      ? `origin ${event.originName ?? '?'}${event.originAddress ? ` (${event.originAddress})` : ''} of pool ${event.poolName}`
      : `pool ${event.poolName}`;
  const reason = event.newHealth === 'Unhealthy' ? `: ${event.reason}` : '';
  return `Load balancing ${subject} is now ${event.newHealth}${reason}`;
}

/** The alert-specific `data` object of a load_balancing_health_alert (what receivers in the wild read). */
export function healthAlertData(event: HealthEvent) {
  return {
    pool_id: event.poolId,
    pool_name: event.poolName,
    origin_name: event.originName ?? '',
    origin_address: event.originAddress ?? '',
    new_health: event.newHealth,
    event_source: event.eventSource,
    reason: event.reason,
    occurred_at: event.occurredAt,
    event_id: event.id,
  };
}

export interface AlertPolicyRef {
  id: string;
  name: string;
}

/** The JSON body POSTed to webhooks, in the shape of Cloudflare's notification webhooks. */
export function webhookBody(event: HealthEvent, policy: AlertPolicyRef, correlationId: string): string {
  return JSON.stringify({
    name: policy.name,
    text: describeEvent(event),
    data: healthAlertData(event),
    ts: Math.floor(Date.parse(event.occurredAt) / 1000),
    account_id: event.accountId,
    policy_id: policy.id,
    policy_name: policy.name,
    alert_type: LOAD_BALANCING_HEALTH_ALERT,
    alert_correlation_id: correlationId,
    alert_event: event.newHealth === 'Unhealthy' ? 'ALERT_STATE_EVENT_START' : 'ALERT_STATE_EVENT_END',
  });
}

function detailLines(event: HealthEvent): string {
  return [
    `Pool:         ${event.poolName} (${event.poolId})`,
    ...(event.eventSource === 'origin'
      ? [`Origin:       ${event.originName ?? ''} ${event.originAddress ?? ''}`.trimEnd()]
      : []),
    `Event source: ${event.eventSource}`,
    `New health:   ${event.newHealth}`,
    `Reason:       ${event.reason}`,
    `Time:         ${event.occurredAt}`,
    `Account:      ${event.accountId}`,
  ].join('\n');
}

export function policyEmail(event: HealthEvent, policy: AlertPolicyRef): MailContent {
  return {
    subject: `[Ledge] ${policy.name}: ${describeEvent(event)}`,
    text: `${describeEvent(event)}.\n\n${detailLines(event)}\n\nSent by notification policy "${policy.name}" (${policy.id}).\n`,
  };
}

export function legacyAlertEmail(to: string, event: HealthEvent): MailContent {
  return {
    subject: `[Ledge] Pool health alert: ${describeEvent(event)}`,
    text:
      `${describeEvent(event)}.\n\n${detailLines(event)}\n\n` +
      `You receive this because pool ${event.poolName} lists ${to} in its notification_email field, which is deprecated.\n`,
  };
}

/** What a pool enablement change looks like to a human, in one line. */
export function describeEnablement(event: PoolEnablementEvent): string {
  return `Load balancing pool ${event.poolName} was ${event.enabled ? 'enabled' : 'disabled'}`;
}

/**
 * The webhook body of a load_balancing_pool_enablement_alert: the same envelope as health alerts. A change
 * is a single event, not an incident with a start and an end, so each alert has its own correlation id.
 */
export function enablementWebhookBody(event: PoolEnablementEvent, policy: AlertPolicyRef): string {
  return JSON.stringify({
    name: policy.name,
    text: describeEnablement(event),
    data: {
      pool_id: event.poolId,
      pool_name: event.poolName,
      enabled: event.enabled,
      occurred_at: event.occurredAt,
    },
    ts: Math.floor(Date.parse(event.occurredAt) / 1000),
    account_id: event.accountId,
    policy_id: policy.id,
    policy_name: policy.name,
    alert_type: LOAD_BALANCING_POOL_ENABLEMENT_ALERT,
    alert_correlation_id: newId(),
  });
}

export function enablementEmail(event: PoolEnablementEvent, policy: AlertPolicyRef): MailContent {
  const details = [
    `Pool:     ${event.poolName} (${event.poolId})`,
    `Enabled:  ${event.enabled}`,
    `Time:     ${event.occurredAt}`,
    `Account:  ${event.accountId}`,
  ].join('\n');
  const effect = event.enabled
    ? 'It receives traffic and is health checked again.'
    : 'It receives no traffic and is not health checked; load balancers using it fail over to their next pool.';
  return {
    subject: `[Ledge] ${policy.name}: ${describeEnablement(event)}`,
    text: `${describeEnablement(event)}. ${effect}\n\n${details}\n\nSent by notification policy "${policy.name}" (${policy.id}).\n`,
  };
}

export const DEPRECATION_SUBJECT = '[Ledge] Action needed: pool notification_email is deprecated';

export function deprecationNotice(accountId: string, poolsWithLegacyEmail: number): MailContent {
  return {
    subject: DEPRECATION_SUBJECT,
    text:
      `${poolsWithLegacyEmail} load balancing pool(s) of account ${accountId} still send health alerts through the ` +
      `deprecated notification_email field.\n\nTo migrate:\n` +
      `  1. List pools and keep those whose notification_email is not empty.\n` +
      `  2. Create a load_balancing_health_alert notification policy covering those pools\n` +
      `     (POST /accounts/${accountId}/alerting/v3/policies, or \`ledge notifications policies create\`).\n` +
      `  3. Empty notification_email on every pool (PATCH /accounts/${accountId}/load_balancers/pools with\n` +
      `     {"notification_email": ""}, looping over every page).\n\n` +
      `These notices continue, at most one per address per day, until no pool of the account keeps a legacy email.\n`,
  };
}
