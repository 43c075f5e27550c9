import { z } from 'zod';
import { R2Errors } from './errors.ts';

/** R2 accepts at most this many lifecycle rules per bucket. */
export const MAX_LIFECYCLE_RULES = 1000;

const AgeCondition = z.object({ type: z.literal('Age'), maxAge: z.number().int().nonnegative() });
const DateCondition = z.object({
  type: z.literal('Date'),
  date: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'date must be an ISO 8601 date'),
});
const AgeOrDate = z.discriminatedUnion('type', [AgeCondition, DateCondition]);

/** One rule as the /lifecycle API and wrangler send it (ages in seconds, dates ISO 8601). */
export const LifecycleRuleSchema = z.object({
  id: z.string().min(1).max(255),
  enabled: z.boolean(),
  // wrangler sends `conditions: {}` for a rule without a prefix.
  conditions: z.object({ prefix: z.string().max(1024).optional() }).optional(),
  deleteObjectsTransition: z.object({ condition: AgeOrDate.optional() }).optional(),
  abortMultipartUploadsTransition: z.object({ condition: AgeCondition.optional() }).optional(),
  storageClassTransitions: z
    .array(z.object({ condition: AgeOrDate, storageClass: z.literal('InfrequentAccess') }))
    .optional(),
});

export const LifecyclePutSchema = z.object({ rules: z.array(LifecycleRuleSchema).max(MAX_LIFECYCLE_RULES).optional() });

export type LifecycleRule = z.infer<typeof LifecycleRuleSchema>;
export type LifecycleCondition = z.infer<typeof AgeOrDate>;

const DAY_MS = 86_400_000;

/**
 * Whether an ISO 8601 date is midnight UTC: lifecycle dates are days (S3 refuses any other time, and
 * wrangler sends `YYYY-MM-DDT00:00:00.000Z`), so both doors refuse a rule the other could not show.
 */
export function isMidnightUtc(date: string): boolean {
  const time = Date.parse(date);
  return !Number.isNaN(time) && time % DAY_MS === 0;
}

/**
 * Checks what the schema cannot: unique ids, at least one action per rule (as R2 refuses both), and dates
 * at midnight UTC.
 */
export function assertLifecycleRules(rules: readonly LifecycleRule[]): void {
  const seen = new Set<string>();
  for (const rule of rules) {
    if (seen.has(rule.id)) throw R2Errors.invalidArgument(`lifecycle rule ids must be unique: "${rule.id}" repeats`);
    seen.add(rule.id);
    const dated = [
      rule.deleteObjectsTransition?.condition,
      ...(rule.storageClassTransitions ?? []).map((t) => t.condition),
    ];
    for (const condition of dated) {
      if (condition?.type === 'Date' && !isMidnightUtc(condition.date)) {
        throw R2Errors.invalidArgument(
          `lifecycle rule "${rule.id}": date ${condition.date} must be midnight UTC (e.g. 2030-01-01T00:00:00.000Z)`,
        );
      }
    }
    const actions =
      (rule.deleteObjectsTransition ? 1 : 0) +
      (rule.abortMultipartUploadsTransition ? 1 : 0) +
      (rule.storageClassTransitions?.length ?? 0);
    if (actions === 0) {
      throw R2Errors.invalidArgument(
        `lifecycle rule "${rule.id}" has no action: set deleteObjectsTransition, abortMultipartUploadsTransition or storageClassTransitions`,
      );
    }
  }
}

/** Whether `condition` holds for something created at `createdAt` (ms) at time `now` (ms). */
export function conditionHoldsAt(condition: LifecycleCondition | undefined, createdAt: number, now: number): boolean {
  if (!condition) return false;
  if (condition.type === 'Age') return now - createdAt >= condition.maxAge * 1000;
  return now >= Date.parse(condition.date);
}
