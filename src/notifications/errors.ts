import { clip, LedgeError } from '../shared/errors.ts';

/**
 * v4 errors of the notifications service. Cloudflare's alerting codes are not documented publicly, so
 * these are Ledge's own stable codes in one block (17xxx); HTTP statuses follow the v4 conventions.
 */
export const NOTIFICATION_VALIDATION_CODE = 17001;

export const NotificationErrors = {
  validation: (message: string) => new LedgeError(400, NOTIFICATION_VALIDATION_CODE, message),
  unknownAlertType: (type: string) =>
    new LedgeError(
      400,
      17002,
      `alert_type "${clip(type)}" is not an available alert type (see GET /alerting/v3/available_alerts)`,
    ),
  filterNotAllowed: (key: string, type: string, allowed: string[]) =>
    new LedgeError(
      400,
      17003,
      `filter "${clip(key)}" is not allowed for ${clip(type)}; allowed filters: ${allowed.join(', ')}`,
    ),
  filterValue: (key: string, value: string, allowed: readonly string[]) =>
    new LedgeError(400, 17004, `filters.${clip(key)}: "${clip(value)}" is not one of ${allowed.join(', ')}`),
  unknownPool: (poolId: string) =>
    new LedgeError(400, 17005, `filters.pool_id: pool ${clip(poolId)} does not exist in this account`),
  unknownWebhook: (id: string) =>
    new LedgeError(400, 17006, `mechanisms.webhooks: webhook ${clip(id)} does not exist in this account`),
  invalidEmail: (address: string) =>
    new LedgeError(400, 17007, `mechanisms.email: "${clip(address)}" is not a valid email address`),
  webhookTestFailed: (detail: string) =>
    new LedgeError(400, 17008, `the webhook did not accept the test message: ${detail}`),
  invalidUrl: (detail: string) => new LedgeError(400, 17009, `url: ${detail}`),
  policyNotFound: (id: string) => new LedgeError(404, 17010, `notification policy ${clip(id)} not found`),
  webhookNotFound: (id: string) => new LedgeError(404, 17011, `webhook destination ${clip(id)} not found`),
  webhookInUse: (id: string, policies: string[]) =>
    new LedgeError(
      409,
      17012,
      `webhook ${clip(id)} is used by policies ${policies.join(', ')}; remove it from them first`,
    ),
} as const;
