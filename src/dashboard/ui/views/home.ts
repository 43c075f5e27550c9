import { get, page } from '../api.ts';
import { h, replace } from '../dom.ts';
import { href } from '../router.ts';
import { acct } from '../state.ts';
import { pageView } from '../ui-kit.ts';

/** Overview: what the account holds, each area one click away. */
export async function home(main: HTMLElement): Promise<void> {
  const [buckets, scripts, pools, policies] = await Promise.all([
    get<{ buckets: unknown[] }>(`${acct()}/r2/buckets`, { per_page: 1000 }).catch(() => ({ buckets: [] })),
    get<unknown[]>(`${acct()}/workers/scripts`).catch(() => []),
    page<unknown>(`${acct()}/load_balancers/pools`, 1, 5).catch(() => ({ totalCount: 0 })),
    get<unknown[]>(`${acct()}/alerting/v3/policies`).catch(() => []),
  ]);
  const tile = (label: string, target: string, count: string) =>
    h('li', null, h('a', { href: target }, label), h('p', null, count));
  replace(
    main,
    pageView(
      'Overview',
      h(
        'ul',
        { class: 'tiles' },
        tile('R2 Object Storage', href('r2'), `${buckets.buckets.length} bucket(s)`),
        tile('Workers & Pages', href('workers'), `${scripts.length} script(s)`),
        tile('Load Balancing', href('lb'), `${pools.totalCount} pool(s)`),
        tile('Notifications', href('notifications'), `${policies.length} polic(ies)`),
      ),
    ),
  );
}
