// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { renderInstance, renderWorkflow, renderWorkflows } from './workflows.render.ts';
import { cellTexts, signedInAs } from './render-testing.ts';

const markup = '<img src=x onerror=alert(1)>';

describe('Workflows, drawn from their data', () => {
  it('lists Workflows with their Worker, class and instances by status, as text', () => {
    signedInAs(state, {});
    const view = renderWorkflows([
      {
        id: 'w1',
        name: markup,
        class_name: 'Signup',
        script_name: 'signup-worker',
        created_on: '',
        instances: { complete: 2, waiting: 1 },
      },
    ]);
    expect(cellTexts([view]).map((row) => row.slice(0, 4))).toEqual([
      [markup, 'signup-worker', 'Signup', '2 complete, 1 waiting'],
    ]);
    expect(view.querySelector('img')).toBeNull();
  });

  it("lists a Workflow's instances, each linking to its history", () => {
    signedInAs(state, {});
    const workflow = { id: 'w1', name: 'signup', class_name: 'S', script_name: 's', created_on: '', instances: {} };
    const view = renderWorkflow(
      workflow,
      {
        items: [{ id: 'i-1', status: 'waiting', created_on: '', modified_on: '', ended_on: null }],
        page: 1,
        totalPages: 1,
      },
      () => undefined,
    );
    expect(cellTexts([view]).map((row) => row.slice(0, 2))).toEqual([['i-1', 'waiting']]);
    expect(view.querySelector('a[href="#/workflows/signup/i-1"]')).not.toBeNull();
  });

  it("shows an instance's steps (attempts, sleeps, waits) and output as text, and sends its actions", async () => {
    signedInAs(state, {});
    const act = vi.fn(async () => undefined);
    const view = renderInstance(
      'signup',
      'i-1',
      {
        status: 'waiting',
        params: { email: markup },
        queued: '',
        start: null,
        end: null,
        output: '',
        error: null,
        steps: [
          {
            type: 'step',
            name: 'charge',
            start: '',
            end: '',
            success: true,
            output: '"<b>42</b>"',
            attempts: [
              { start: '', end: '', success: false, error: { name: 'Error', message: 'card declined' } },
              { start: '', end: '', success: true, error: null },
            ],
          },
          { type: 'sleep', name: 'cool down', start: '', end: '', finished: true },
          {
            type: 'waitForEvent',
            name: 'approval',
            start: '',
            end: '',
            finished: false,
            event_type: 'approve',
            error: null,
          },
        ],
      },
      { act },
    );
    expect(cellTexts([view]).map((row) => [row[0], row[1], row[3], row[4]])).toEqual([
      ['charge', 'step', 'done after 2 attempts (failed: card declined)', '"<b>42</b>"'],
      ['cool down', 'sleep', 'slept', ''],
      ['approval', 'waitForEvent', 'waiting for approve', ''],
    ]);
    expect(view.querySelector('b')).toBeNull();
    expect(view.querySelector('img')).toBeNull();
    expect(view.textContent).toContain(markup);
    const pause = [...view.querySelectorAll('button')].find((b) => b.textContent === 'Pause')!;
    pause.click();
    await vi.waitFor(() => expect(act).toHaveBeenCalledWith('pause'));
  });
});
