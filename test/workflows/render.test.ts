import { describe, expect, it } from 'vitest';
import { renderInstance, stepsOf, type EngineEvent } from '../../src/workflows/render.ts';
import type { WorkflowRecord } from '../../src/workflows/schemas.ts';

const t = (s: number) => Date.UTC(2026, 0, 1, 0, 0, s);
const record: WorkflowRecord = {
  id: 'w-1',
  account_id: 'a',
  name: 'flow',
  script_name: 's',
  class_name: 'Flow',
  step_limit: null,
  created_on: '',
  modified_on: '',
};

/** The history workflows.js records for a retried step, a sleep, an event wait that timed out and a termination. */
const history: EngineEvent[] = [
  { type: 'workflow_queued', timestamp: t(0) },
  { type: 'workflow_started', timestamp: t(1), params: { n: 1 } },
  { type: 'step_started', timestamp: t(1), stepName: 'charge-1', config: { retries: { limit: 2, delay: 10 } } },
  { type: 'attempt_started', timestamp: t(1), stepName: 'charge-1', attempt: 1 },
  {
    type: 'attempt_errored',
    timestamp: t(2),
    stepName: 'charge-1',
    attempt: 1,
    error: { name: 'Error', message: 'no' },
  },
  { type: 'attempt_started', timestamp: t(3), stepName: 'charge-1', attempt: 2 },
  { type: 'attempt_completed', timestamp: t(4), stepName: 'charge-1', attempt: 2 },
  { type: 'step_completed', timestamp: t(4), stepName: 'charge-1', output: { total: 42 } },
  { type: 'sleep_started', timestamp: t(5), stepName: 'nap-1', durationMs: 3000 },
  { type: 'sleep_completed', timestamp: t(8), stepName: 'nap-1' },
  { type: 'wait_started', timestamp: t(9), stepName: 'approval-1', eventType: 'approve' },
  { type: 'wait_timed_out', timestamp: t(12), stepName: 'approval-1' },
  { type: 'workflow_terminated', timestamp: t(13) },
];

describe("an instance's steps from the engine's history", () => {
  it('groups attempts under their step, names steps without their count, and keeps sleeps, waits and a termination', () => {
    expect(stepsOf(history)).toEqual([
      {
        type: 'step',
        name: 'charge',
        start: new Date(t(1)).toISOString(),
        end: new Date(t(4)).toISOString(),
        success: true,
        output: '{"total":42}',
        config: { retries: { limit: 2, delay: 10 } },
        attempts: [
          {
            start: new Date(t(1)).toISOString(),
            end: new Date(t(2)).toISOString(),
            success: false,
            error: { name: 'Error', message: 'no' },
          },
          { start: new Date(t(3)).toISOString(), end: new Date(t(4)).toISOString(), success: true, error: null },
        ],
      },
      {
        type: 'sleep',
        name: 'nap',
        start: new Date(t(5)).toISOString(),
        end: new Date(t(8)).toISOString(),
        finished: true,
        error: null,
      },
      {
        type: 'waitForEvent',
        name: 'approval',
        start: new Date(t(9)).toISOString(),
        end: new Date(t(12)).toISOString(),
        finished: true,
        error: { name: 'WorkflowTimeoutError', message: 'Execution timed out waiting for the event' },
        event_type: 'approve',
      },
      { type: 'termination', trigger: { source: 'api' } },
    ]);
  });

  it('describes the instance: times, success, step count, its params and output', () => {
    const described = renderInstance(
      { meta: { id: 'i', status: 'terminated', created: t(0), params: { n: 1 } }, history },
      record,
    );
    expect(described).toMatchObject({
      status: 'terminated',
      queued: new Date(t(0)).toISOString(),
      start: new Date(t(1)).toISOString(),
      end: new Date(t(13)).toISOString(),
      success: false,
      step_count: 3,
      params: { n: 1 },
      versionId: 'w-1',
    });
    const done = renderInstance(
      {
        meta: { id: 'i', status: 'complete', created: t(0), output: { ok: true } },
        history: [...history.slice(0, 8), { type: 'workflow_completed', timestamp: t(20) }],
      },
      record,
    );
    expect([done.output, done.success, done.end]).toEqual(['{"ok":true}', true, new Date(t(20)).toISOString()]);
  });
});
