import { z } from 'zod';

/** A queue's name: lowercase letters, digits and `-` (Cloudflare's rule), never 32 hex digits (routes take ids). */
export const QUEUE_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const QUEUE_ID = /^[0-9a-f]{32}$/;
export const JURISDICTIONS = ['eu', 'us', 'fedramp'] as const;

/** Cloudflare's bounds: delays up to 12 hours; retention from 60 s to 14 days (4 days by default). */
export const MAX_DELAY_SECONDS = 43_200;
export const DEFAULT_RETENTION_SECONDS = 4 * 24 * 3600;

const Settings = z.strictObject({
  delivery_delay: z.number().int().min(0).max(MAX_DELAY_SECONDS).optional(),
  delivery_paused: z.boolean().optional(),
  message_retention_period: z
    .number()
    .int()
    .min(60)
    .max(14 * 24 * 3600)
    .optional(),
});

/** POST /queues (the SDK's QueueCreateParams; wrangler adds `settings`). */
export const QueueCreateSchema = z.object({
  queue_name: z.string({ error: 'queue_name is required and must be a string' }),
  jurisdiction: z.enum(JURISDICTIONS).optional(),
  settings: Settings.optional(),
});

/** PUT and PATCH /queues/{id} (the SDK's update and edit). */
export const QueueUpdateSchema = z.object({
  queue_name: z.string().optional(),
  jurisdiction: z.enum(JURISDICTIONS).optional(),
  settings: Settings.optional(),
});
export type QueueUpdate = z.infer<typeof QueueUpdateSchema>;

/** A worker consumer's settings, within Cloudflare's bounds. */
const ConsumerSettings = z.object({
  batch_size: z.number().int().min(1).max(100).optional(),
  max_retries: z.number().int().min(0).max(100).optional(),
  max_wait_time_ms: z.number().int().min(0).max(60_000).optional(),
  max_concurrency: z.number().int().min(1).max(250).nullable().optional(),
  retry_delay: z.number().int().min(0).max(MAX_DELAY_SECONDS).optional(),
  visibility_timeout_ms: z.number().int().optional(),
});

/** POST and PUT of a consumer (the SDK's ConsumerCreateParams; wrangler sends `environment_name` too). */
export const ConsumerBodySchema = z.object({
  type: z.enum(['worker', 'http_pull']).default('worker'),
  script_name: z.string().optional(),
  environment_name: z.string().optional(),
  dead_letter_queue: z.string().optional(),
  settings: ConsumerSettings.optional(),
});
export type ConsumerBody = z.infer<typeof ConsumerBodySchema>;

/** A queue as Ledge keeps it. */
export interface QueueRecord {
  queue_id: string;
  account_id: string;
  queue_name: string;
  delivery_delay: number;
  /** 1: messages are taken and kept, none delivered (the engine runs without the queue's consumer). */
  delivery_paused: number;
  message_retention_period: number;
  created_on: string;
  modified_on: string;
}

/** A worker consumer of a queue: the script whose queue() handler gets its batches, and how. */
export interface ConsumerRecord {
  consumer_id: string;
  queue_id: string;
  account_id: string;
  script_name: string;
  /** A queue's name, in the same account. */
  dead_letter_queue: string | null;
  batch_size: number;
  max_retries: number;
  max_wait_time_ms: number;
  max_concurrency: number | null;
  retry_delay: number;
  created_on: string;
}

/** A queue's backlog as its engine counts it (queues.js metrics()). */
export interface QueueMetrics {
  backlogCount: number;
  backlogBytes: number;
  oldestMessageTimestamp: number;
}
