import { del, enc, page, post } from '../api.ts';
import { field, formatTime, h, replace, table } from '../dom.ts';
import { state } from '../state.ts';
import { confirmDialog, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

interface Zone {
  id: string;
  name: string;
  status: string;
  account: { id: string; name: string };
  created_on: string;
}

/** Zones: hostnames of the account that load balancers live in. */
export async function zones(main: HTMLElement, pageNumber = 1): Promise<void> {
  const result = await page<Zone>('/zones', pageNumber, 50, { 'account.id': state.accountId });
  const status = notice();
  const name = field('Zone name', { required: true, placeholder: 'example.com' });
  const form = h(
    'form',
    { class: 'card inline' },
    name.row,
    h('button', { type: 'submit' }, 'Add zone'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post('/zones', { name: name.input.value, account: { id: state.accountId } }).then(
      () => void zones(main),
      (error: unknown) => status.fail(error),
    );
  });
  replace(
    main,
    pageView(
      'Zones',
      guardForm(form),
      table(
        `Zones (${result.totalCount})`,
        ['Zone', 'Status', 'Created', 'ID', 'Actions'],
        result.items.map((z) => [
          z.name,
          z.status,
          formatTime(z.created_on),
          h('code', null, z.id),
          writeButton('Delete', async () => {
            if (!(await confirmDialog(`Delete the zone "${z.name}" and its load balancers?`, 'Delete zone'))) return;
            del(`/zones/${enc(z.id)}`).then(
              () => void zones(main),
              (error: unknown) => status.fail(error),
            );
          }),
        ]),
      ),
      pager(result.page, result.totalPages, (next) => void zones(main, next)),
    ),
  );
}
