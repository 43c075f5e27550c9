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

/** Values of one filter: at most 1,000, except pool ids (the request body's 10 MiB cap bounds them). */
const MAX_FILTER_VALUES = 1000;
const MAX_POOL_IDS = 100_000;

export const PolicyInputSchema = z.object({
  name: z.string().trim().min(1, 'name is required').max(256),
  description: z.string().max(1024).optional(),
  enabled: z.boolean(),
  alert_type: z.string().min(1, 'alert_type is required').max(128),
  mechanisms: MechanismSchema,
  filters: z
    .record(
      z.string().max(128),
      z.array(Id).min(1, 'must list at least one value (leave the filter out to match everything)').max(MAX_POOL_IDS),
    )
    .superRefine((filters, ctx) => {
      // A pool_id filter may name every pool of a large account (`ledge notifications migrate` makes one
      // policy per address list, over all its pools); every other filter is a short list.
      for (const [key, values] of Object.entries(filters))
        if (key !== 'pool_id' && values.length > MAX_FILTER_VALUES)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `Too big: expected array to have <=${MAX_FILTER_VALUES} items`,
          });
    })
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
