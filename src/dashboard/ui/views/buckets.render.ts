import type { Bucket } from '../../../client/index.ts';
import { field, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';
import { locationName } from './bucket-settings.render.ts';

/** "R2 Object Storage": the buckets drawn from their data, with create and delete; r2.ts loads and saves. */
export function renderBuckets(
  buckets: Bucket[],
  actions: { create(name: string): Promise<unknown>; remove(name: string): Promise<unknown> },
): HTMLElement {
  const status = notice();
  const name = field(
    'Bucket name',
    { required: true, pattern: '[a-z0-9][a-z0-9-]{1,61}[a-z0-9]', autocomplete: 'off' },
    'Lowercase letters, digits and hyphens, 3 to 63 characters',
  );
  const form = h(
    'form',
    { class: 'card inline' },
    name.row,
    h('button', { type: 'submit', class: 'primary' }, 'Create bucket'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.create(name.input.value).catch((error: unknown) => status.fail(error));
  });
  const rows = buckets.map((bucket) => [
    h('a', { href: href('r2', bucket.name) }, bucket.name),
    formatTime(bucket.creation_date),
    locationName(bucket.location),
    bucket.storage_class ?? 'Standard',
    h(
      'span',
      { class: 'actions' },
      h('a', { href: href('r2', bucket.name, 'settings'), class: 'button' }, 'Settings'),
      writeButton('Delete', async () => {
        if (!(await confirmDialog(`Delete the bucket "${bucket.name}"? It must be empty.`, 'Delete bucket'))) return;
        actions.remove(bucket.name).catch((error: unknown) => status.fail(error));
      }),
    ),
  ]);
  return pageView(
    'R2 Object Storage',
    guardForm(form),
    table(
      `Buckets (${buckets.length})`,
      ['Bucket', 'Created', 'Location', 'Storage class', 'Actions'],
      rows,
      'No buckets yet: create one above.',
    ),
  );
}
