// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { renderQueues } from './queues.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

describe('Queues, drawn from their data', () => {
  it('lists queues with their backlog, consumer and producers, as text', () => {
    signedInAs(state, {});
    const markup = '<img src=x onerror=alert(1)>';
    const view = renderQueues(
      [
        {
          queue_id: 'q1',
          queue_name: 'jobs',
          created_on: '',
          consumers: [{ script_name: markup, settings: { batch_size: 25, max_retries: 2 } }],
          producers: [{ script: 'web' }, { script: 'cron' }],
          backlog: { backlog_count: 42, backlog_bytes: 2048 },
        },
        { queue_id: 'q2', queue_name: 'idle', created_on: '', consumers: [], producers: [] },
      ],
      { create: async () => undefined, remove: async () => undefined },
    );
    const rows = cellTexts([view]).map((row) => row.slice(0, 5));
    expect(rows).toEqual([
      ['jobs', 'q1', '42 (2.0 KiB)', `${markup} (batch 25, retries 2)`, 'web, cron'],
      ['idle', 'q2', 'unavailable', 'none', 'none'],
    ]);
    expect(view.querySelector('img')).toBeNull();
  });

  it('sends the name to create', () => {
    signedInAs(state, {});
    const create = vi.fn(async () => undefined);
    const view = renderQueues([], { create, remove: async () => undefined });
    expect(view.textContent).toContain('No queues yet');
    labelled(view, 'Queue name').value = 'orders';
    submit(view);
    expect(create).toHaveBeenCalledWith('orders');
  });
});
