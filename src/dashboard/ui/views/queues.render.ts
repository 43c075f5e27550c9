import { field, formatBytes, formatTime, h, table } from '../dom.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';

/** A queue as the list gives it, with its backlog from the metrics route (absent when that failed). */
export interface QueueRow {
  queue_id: string;
  queue_name: string;
  created_on: string;
  consumers: { script_name?: string; settings?: { batch_size?: number; max_retries?: number } }[];
  producers: { script?: string }[];
  backlog?: { backlog_count: number; backlog_bytes: number } | undefined;
}

/** "Queues": the account's queues with their depth (backlog) and consumers, with create and delete; queues.ts loads. */
export function renderQueues(
  queues: QueueRow[],
  actions: { create(name: string): Promise<unknown>; remove(queue: QueueRow): Promise<unknown> },
): HTMLElement {
  const status = notice();
  const name = field(
    'Queue name',
    { required: true, pattern: '[a-z0-9]([a-z0-9\\-]{0,61}[a-z0-9])?', autocomplete: 'off' },
    'Lowercase letters, digits and "-", up to 63 characters',
  );
  const form = h(
    'form',
    { class: 'card inline' },
    name.row,
    h('button', { type: 'submit', class: 'primary' }, 'Create queue'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.create(name.input.value).catch((error: unknown) => status.fail(error));
  });
  const rows = queues.map((queue) => [
    queue.queue_name,
    h('code', null, queue.queue_id),
    queue.backlog
      ? `${queue.backlog.backlog_count} (${formatBytes(queue.backlog.backlog_bytes)})`
      : h('em', null, 'unavailable'),
    queue.consumers.length > 0
      ? queue.consumers
          .map(
            (c) =>
              `${c.script_name ?? '?'} (batch ${c.settings?.batch_size ?? 10}, retries ${c.settings?.max_retries ?? 3})`,
          )
          .join(', ')
      : h('em', null, 'none'),
    queue.producers.map((p) => p.script ?? '?').join(', ') || h('em', null, 'none'),
    formatTime(queue.created_on),
    h(
      'span',
      { class: 'actions' },
      writeButton('Delete', async () => {
        const question = `Delete the queue "${queue.queue_name}" and the messages in it? This cannot be undone.`;
        if (!(await confirmDialog(question, 'Delete queue'))) return;
        actions.remove(queue).catch((error: unknown) => status.fail(error));
      }),
    ),
  ]);
  return pageView(
    'Queues',
    guardForm(form),
    table(
      `Queues (${queues.length})`,
      ['Queue', 'ID', 'Backlog', 'Consumer', 'Producers', 'Created', 'Actions'],
      rows,
      'No queues yet: create one above, or with wrangler queues create.',
    ),
  );
}
