import { h } from '../dom.ts';
import { href } from '../router.ts';
import { pageView } from '../ui-kit.ts';

/** "Traffic" > "Load Balancing": the entry page, with the Cloudflare dashboard's own link names; lb.ts loads it. */
export function renderLoadBalancingHome(counts: { pools: number; monitors: number }): HTMLElement {
  const tile = (link: string, label: string, text: string) =>
    h('li', null, h('a', { href: link }, label), h('p', null, text));
  return pageView(
    'Load Balancing',
    h(
      'ul',
      { class: 'tiles' },
      tile(href('lb', 'pools'), 'Manage Pools', `${counts.pools} pool(s)`),
      tile(href('lb', 'monitors'), 'Manage Monitors', `${counts.monitors} monitor(s)`),
      tile(href('lb', 'balancers'), 'Load Balancers', 'Per zone, with their pools and steering'),
    ),
  );
}
