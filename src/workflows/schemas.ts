import { z } from 'zod';

/** Workflow names: letters, digits, `-` and `_`, up to 64 characters (as a `workflow` binding takes them). */
export const WORKFLOW_NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,63}$/;
/** Instance ids as workflows.js takes them. */
export const INSTANCE_ID = /^[a-zA-Z0-9_][a-zA-Z0-9_-]{0,99}$/;

export interface WorkflowRecord {
  id: string;
  account_id: string;
  name: string;
  script_name: string;
  class_name: string;
  step_limit: number | null;
  created_on: string;
  modified_on: string;
}

/** PUT /workflows/{name}, as `wrangler deploy` sends it. */
export const WorkflowPutSchema = z.object({
  script_name: z.string().min(1).max(63),
  class_name: z.string().regex(/^[A-Za-z_$][A-Za-z0-9_$]*$/, 'class_name must be a JavaScript identifier'),
  limits: z.object({ steps: z.number().int().min(1).max(25_000).optional() }).optional(),
  concurrency: z.unknown().optional(),
  schedules: z.unknown().optional(),
  default_retention: z.unknown().optional(),
  jurisdiction: z.unknown().optional(),
});

const Retention = z
  .object({
    success_retention: z.union([z.number(), z.string()]).optional(),
    error_retention: z.union([z.number(), z.string()]).optional(),
  })
  .optional();

/** POST /workflows/{name}/instances: `params` is any JSON value (wrangler sends the parsed `--params`). */
export const InstanceCreateSchema = z.object({
  instance_id: z.string().optional(),
  params: z.unknown().optional(),
  instance_retention: Retention,
  location_hint: z.string().optional(),
});
export type InstanceCreate = z.infer<typeof InstanceCreateSchema>;

export const InstanceBatchSchema = z.array(InstanceCreateSchema).min(1).max(100);

export const StatusEditSchema = z.object({
  status: z.enum(['pause', 'resume', 'terminate', 'restart']),
  rollback: z.boolean().optional(),
  from: z.unknown().optional(),
});

/** The instance statuses (the SDK's), for the list's `status` filter. */
export const INSTANCE_STATUSES = [
  'queued',
  'running',
  'paused',
  'errored',
  'terminated',
  'complete',
  'waitingForPause',
  'waiting',
] as const;
