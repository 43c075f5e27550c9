import { z } from 'zod';

/** `alert_interval` as the API writes it: a Go-style duration such as "30m", "1h", "1h30m", "90s". */
export const ALERT_INTERVAL_FORMAT = /^(?:\d+h)?(?:\d+m)?(?:\d+s)?$/;

/** Ids, email addresses and filter values are short: a long one is a mistake, refused before any lookup. */
const Id = z.string().max(320);

const MechanismSchema = z.strictObject({
  email: z
    .array(z.strictObject({ id: Id }))
    .max(100)
    .optional(),
  webhooks: z
    .array(z.strictObject({ id: Id }))
    .max(100)
    .optional(),
  pagerduty: z
    .array(z.strictObject({ id: Id }))
    .max(0, 'PagerDuty is not available on this platform')
    .optional(),
});

export const PolicyInputSchema = z.object({
  name: z.string().trim().min(1, 'name is required').max(256),
  description: z.string().max(1024).optional(),
  enabled: z.boolean(),
  alert_type: z.string().min(1, 'alert_type is required').max(128),
  mechanisms: MechanismSchema,
  filters: z
    .record(
      z.string().max(128),
      z.array(Id).min(1, 'must list at least one value (leave the filter out to match everything)').max(1000),
    )
    .optional(),
  alert_interval: z
    .string()
    .refine(
      (value) => value !== '' && ALERT_INTERVAL_FORMAT.test(value),
      'must be a duration such as "30m", "1h" or "1h30m"',
    )
    .optional(),
});
export type PolicyInput = z.infer<typeof PolicyInputSchema>;
export type Mechanisms = z.infer<typeof MechanismSchema>;

/** PUT /policies/{id}: every field optional (the SDK sends only what changes); the merge is validated whole. */
export const PolicyUpdateSchema = PolicyInputSchema.partial();
export type PolicyUpdate = z.infer<typeof PolicyUpdateSchema>;

export const WebhookInputSchema = z.object({
  name: z.string().trim().min(1, 'name is required').max(256),
  url: z.string().min(1, 'url is required').max(2048),
  secret: z.string().max(1024).optional(),
});
export type WebhookInput = z.infer<typeof WebhookInputSchema>;

const Rfc3339 = z.iso.datetime({ offset: true });
export const HistoryQuerySchema = z.object({
  since: Rfc3339.optional(),
  before: Rfc3339.optional(),
});

/** Parses an alert_interval ("1h30m") to milliseconds. */
export function intervalMs(interval: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(interval);
  if (!match) return 0;
  const [, h = '0', m = '0', s = '0'] = match;
  return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000;
}
