import type { Zone } from '../../../client/index.ts';
import { field, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

/** The overview and zones pages drawn from their data; home.ts and account.ts load and save through the client. */

export interface OverviewCounts {
  buckets: number;
  scripts: number;
  pools: number;
  policies: number;
}

/** Overview: what the account holds, each area one click away. */
export function renderOverview(counts: OverviewCounts): HTMLElement {
  const tile = (label: string, target: string, count: string) =>
    h('li', null, h('a', { href: target }, label), h('p', null, count));
  return pageView(
    'Overview',
    h(
      'ul',
      { class: 'tiles' },
      tile('R2 Object Storage', href('r2'), `${counts.buckets} bucket(s)`),
      tile('Workers & Pages', href('workers'), `${counts.scripts} script(s)`),
      tile('Load Balancing', href('lb'), `${counts.pools} pool(s)`),
      tile('Notifications', href('notifications'), `${counts.policies} polic(ies)`),
    ),
  );
}

export interface ZonesData {
  items: Zone[];
  page: number;
  totalPages: number;
  totalCount: number;
}

/** Zones: hostnames of the account that load balancers live in. */
export function renderZones(
  data: ZonesData,
  actions: {
    create(name: string): Promise<unknown>;
    remove(zone: Zone): Promise<unknown>;
    showPage(page: number): void;
  },
): HTMLElement {
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
    actions.create(name.input.value).catch((error: unknown) => status.fail(error));
  });
  return pageView(
    'Zones',
    guardForm(form),
    table(
      `Zones (${data.totalCount})`,
      ['Zone', 'Status', 'Created', 'ID', 'Actions'],
      data.items.map((z) => [
        h('a', { href: href('zones', z.id, 'ssl'), title: 'SSL/TLS: certificates and settings' }, z.name),
        z.status ?? '',
        formatTime(z.created_on),
        h('code', null, z.id),
        writeButton('Delete', async () => {
          if (!(await confirmDialog(`Delete the zone "${z.name}" and its load balancers?`, 'Delete zone'))) return;
          actions.remove(z).catch((error: unknown) => status.fail(error));
        }),
      ]),
      'No zones yet: add one to put load balancers in it.',
    ),
    pager(data.page, data.totalPages, actions.showPage),
  );
}
