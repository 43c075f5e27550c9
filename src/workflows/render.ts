import type { WorkflowRecord } from './schemas.ts';

/**
 * The API's and the dashboard's view of Workflows and their instances, from the records and from what the
 * engine stored (workflows.js: an instance's `meta` and its history events, `l:<id>`). Pure.
 */

/** One history event as workflows.js logs it (`stepName` is `<name>-<n>`, the n-th step of that name). */
export interface EngineEvent {
  type: string;
  timestamp: number;
  stepName?: string;
  config?: unknown;
  attempt?: number;
  error?: { name?: string; message?: string };
  output?: unknown;
  durationMs?: number;
  eventType?: string;
  params?: unknown;
}

/** An instance's record as workflows.js keeps it. */
export interface EngineMeta {
  id: string;
  status: string;
  created: number;
  params?: unknown;
  output?: unknown;
  error?: { name?: string; message?: string };
}

/** One line of an instance list, as the engine's index answers it (engine-module.ts). */
export interface InstanceLine {
  id: string;
  status: string;
  created: number;
  started: number | null;
  ended: number | null;
  modified: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));
/** The SDK types outputs as text: a string as it is, anything else as its JSON. */
const asText = (value: unknown): string | null =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);
const plainError = (e: EngineEvent['error']) => (e ? { name: e.name ?? 'Error', message: e.message ?? '' } : null);
/** `charge-2` -> `charge`: the engine numbers steps of one name. */
const stepBase = (stepName: string | undefined): string => (stepName ?? '').replace(/-\d+$/, '');
const TERMINAL = new Set(['complete', 'errored', 'terminated']);
/** The events that end an instance (its `end`). */
const FINAL = new Set(['workflow_completed', 'workflow_errored', 'workflow_terminated']);

export function renderWorkflow(record: WorkflowRecord, instances: Record<string, number> = {}, scriptDeleted = false) {
  return {
    ...(scriptDeleted ? { script_deleted: true } : {}),
    id: record.id,
    name: record.name,
    class_name: record.class_name,
    script_name: record.script_name,
    created_on: record.created_on,
    modified_on: record.modified_on,
    triggered_on: null,
    instances,
  };
}

/** PUT's answer (the SDK's WorkflowUpdateResponse). */
export function renderWorkflowUpdate(record: WorkflowRecord) {
  return {
    id: record.id,
    name: record.name,
    class_name: record.class_name,
    script_name: record.script_name,
    created_on: record.created_on,
    modified_on: record.modified_on,
    triggered_on: null,
    is_deleted: 0,
    terminator_running: 0,
    version_id: record.id,
  };
}

/** A Workflow's one version: Ledge keeps no history of a Workflow's code apart from its Worker's. */
export function renderVersion(record: WorkflowRecord) {
  return {
    id: record.id,
    class_name: record.class_name,
    created_on: record.created_on,
    modified_on: record.modified_on,
    workflow_id: record.id,
    has_dag: false,
    language: 'javascript' as const,
  };
}

export function renderInstanceListed(line: InstanceLine, record: WorkflowRecord) {
  return {
    id: line.id,
    status: line.status,
    created_on: iso(line.created),
    modified_on: iso(line.modified),
    started_on: isoOrNull(line.started),
    ended_on: isoOrNull(line.ended),
    version_id: record.id,
    workflow_id: record.id,
  };
}

type Attempt = { start: string; end: string | null; success: boolean | null; error: ReturnType<typeof plainError> };
type Step =
  | {
      type: 'step';
      name: string;
      start: string;
      end: string | null;
      success: boolean | null;
      output: string | null;
      config: unknown;
      attempts: Attempt[];
    }
  | { type: 'sleep'; name: string; start: string; end: string; finished: boolean; error: null }
  | {
      type: 'waitForEvent';
      name: string;
      start: string;
      end: string;
      finished: boolean;
      error: ReturnType<typeof plainError>;
      event_type?: string;
    }
  | { type: 'termination'; trigger: { source: string } };

/** The steps of an instance from its history: each step with its attempts, sleeps, waits, a termination. */
export function stepsOf(history: readonly EngineEvent[]): Step[] {
  const steps: Step[] = [];
  const open = new Map<string, Step>();
  for (const event of history) {
    const at = iso(event.timestamp);
    const key = event.stepName ?? '';
    const step = open.get(key);
    switch (event.type) {
      case 'step_started': {
        const started: Step = {
          type: 'step',
          name: stepBase(event.stepName),
          start: at,
          end: null,
          success: null,
          output: null,
          config: event.config ?? {},
          attempts: [],
        };
        steps.push(started);
        open.set(key, started);
        break;
      }
      case 'attempt_started':
        if (step?.type === 'step') step.attempts.push({ start: at, end: null, success: null, error: null });
        break;
      case 'attempt_completed':
      case 'attempt_errored': {
        const attempt = step?.type === 'step' ? step.attempts.at(-1) : undefined;
        if (attempt) {
          attempt.end = at;
          attempt.success = event.type === 'attempt_completed';
          attempt.error = plainError(event.error);
        }
        break;
      }
      case 'step_completed':
      case 'step_errored':
        if (step?.type === 'step') {
          step.end = at;
          step.success = event.type === 'step_completed';
          step.output = asText(event.output);
        }
        break;
      case 'sleep_started': {
        const sleep: Step = {
          type: 'sleep',
          name: stepBase(event.stepName),
          start: at,
          end: iso(event.timestamp + (event.durationMs ?? 0)),
          finished: false,
          error: null,
        };
        steps.push(sleep);
        open.set(key, sleep);
        break;
      }
      case 'sleep_completed':
        if (step?.type === 'sleep') step.finished = true;
        break;
      case 'wait_started': {
        const wait: Step = {
          type: 'waitForEvent',
          name: stepBase(event.stepName),
          start: at,
          end: at,
          finished: false,
          error: null,
          ...(event.eventType !== undefined ? { event_type: event.eventType } : {}),
        };
        steps.push(wait);
        open.set(key, wait);
        break;
      }
      case 'wait_completed':
      case 'wait_timed_out':
        if (step?.type === 'waitForEvent') {
          step.finished = true;
          step.end = at;
          if (event.type === 'wait_timed_out')
            step.error = { name: 'WorkflowTimeoutError', message: 'Execution timed out waiting for the event' };
        }
        break;
      case 'workflow_terminated':
        steps.push({ type: 'termination', trigger: { source: 'api' } });
        break;
    }
  }
  return steps;
}

/** GET /instances/{id} (the SDK's InstanceGetResponse). */
export function renderInstance(described: { meta: EngineMeta; history: EngineEvent[] }, record: WorkflowRecord) {
  const { meta, history } = described;
  const started = history.find((e) => e.type === 'workflow_started');
  const ended = TERMINAL.has(meta.status) ? history.findLast((e) => FINAL.has(e.type)) : undefined;
  const steps = stepsOf(history);
  const output = meta.output === undefined || meta.output === null ? '' : meta.output;
  return {
    status: meta.status,
    params: meta.params ?? {},
    queued: iso(meta.created),
    start: isoOrNull(started?.timestamp),
    end: isoOrNull(ended?.timestamp),
    success:
      meta.status === 'complete' ? true : meta.status === 'errored' || meta.status === 'terminated' ? false : null,
    error: meta.error ? { name: meta.error.name ?? 'Error', message: meta.error.message ?? '' } : null,
    output: typeof output === 'number' ? output : (asText(output) ?? ''),
    rollback: null,
    step_count: steps.filter((s) => s.type !== 'termination').length,
    steps,
    trigger: { source: 'unknown' as const },
    versionId: record.id,
  };
}
