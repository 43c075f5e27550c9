import { clip, LedgeError } from '../shared/errors.ts';

/** v4 codes of Cloudflare's Workflows API (wrangler reads 10200 by number; the instance codes are workflows.js's). */
export const WORKFLOWS_VALIDATION_CODE = 10001;

export const WorkflowErrors = {
  validation: (detail: string) => new LedgeError(400, WORKFLOWS_VALIDATION_CODE, detail),
  /** The same answer for a Workflow that does not exist and one of another account. */
  notFound: (name: string) => new LedgeError(404, 10200, `Workflow "${clip(name)}" not found`),
  instanceNotFound: (id: string) => new LedgeError(404, 10400, `Instance "${clip(id)}" not found`),
  instanceExists: (id: string) =>
    new LedgeError(409, 10405, `A Workflow instance with id "${clip(id)}" already exists`),
  invalidInstanceId: () =>
    new LedgeError(400, 10402, 'Instance ID is invalid: 1 to 100 letters, digits, "-" or "_" (not starting with "-")'),
  /** What the engine refused (a bad event type, a step config, an action the instance's status forbids). */
  engine: (message: string) => new LedgeError(400, WORKFLOWS_VALIDATION_CODE, message),
  /** The Worker that runs the Workflow is not running (not deployed yet, failed, or restarting). */
  unavailable: (detail: string) => new LedgeError(503, 10001, `The Workflow cannot be reached: ${detail}`),
  scriptMissing: (script: string) =>
    new LedgeError(400, 10201, `The Worker "${clip(script)}" does not exist in this account: deploy it first.`),
} as const;
