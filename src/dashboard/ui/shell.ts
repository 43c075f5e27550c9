import { get, session } from './api.ts';
import { button, h, replace, uid } from './dom.ts';
import { currentRoute, go, href } from './router.ts';
import { acct, state } from './state.ts';
import { errorText, pageView } from './ui-kit.ts';
import { routeView } from './views/index.ts';
import { startLive } from './live.ts';

/**
 * The frame around every page: Cloudflare's dashboard names in the navigation ("R2 Object Storage", "Workers &
 * Pages", "Traffic" > "Load Balancing", "Notifications"), the account, sign-out, and the legacy-email banner.
 */
export function renderShell(app: HTMLElement): void {
  const main = h('main', { id: 'main' });
  const banner = h('div', { id: 'banner' });
  const trafficId = uid('menu');
  const trafficLinks = h(
    'ul',
    { id: trafficId, class: 'submenu' },
    h('li', null, h('a', { href: href('lb') }, 'Load Balancing')),
  );
  const trafficOpen = location.hash.startsWith('#/lb');
  trafficLinks.hidden = !trafficOpen;
  const traffic = button(
    'Traffic',
    () => {
      const open = traffic.getAttribute('aria-expanded') !== 'true';
      traffic.setAttribute('aria-expanded', String(open));
      trafficLinks.hidden = !open;
    },
    { 'aria-expanded': String(trafficOpen), 'aria-controls': trafficId, class: 'nav-group' },
  );
  const accountSelect = h(
    'select',
    { id: 'account-select' },
    state.accounts.map((a) =>
      h('option', { value: a.id, selected: a.id === state.accountId }, `${a.name} (${a.id.slice(0, 8)})`),
    ),
  );
  accountSelect.addEventListener('change', () => {
    state.accountId = accountSelect.value;
    show();
  });
  const signOut = button('Sign out', () => {
    session('DELETE')
      .catch(() => undefined)
      .finally(() => location.reload());
  });
  const nav = h(
    'nav',
    { 'aria-label': 'Main' },
    h(
      'ul',
      null,
      h('li', null, h('a', { href: '#/' }, 'Overview')),
      h('li', null, h('a', { href: href('r2') }, 'R2 Object Storage')),
      h('li', null, h('a', { href: href('workers') }, 'Workers & Pages')),
      h('li', null, h('a', { href: href('kv') }, 'Workers KV')),
      h('li', null, h('a', { href: href('d1') }, 'D1 SQL Database')),
      h('li', null, h('a', { href: href('queues') }, 'Queues')),
      h('li', null, h('a', { href: href('workflows') }, 'Workflows')),
      h('li', null, h('a', { href: href('durable-objects') }, 'Durable Objects')),
      h('li', null, traffic, trafficLinks),
      h('li', null, h('a', { href: href('notifications') }, 'Notifications')),
      h('li', null, h('a', { href: href('zones') }, 'Zones')),
      h('li', null, h('a', { href: href('members') }, 'Members')),
      h('li', null, h('a', { href: href('tokens') }, 'API Tokens')),
    ),
  );
  // On a narrow screen the navigation folds into a menu button (CSS shows the button and hides the closed menu).
  nav.id = 'main-nav';
  const menu = button(
    'Menu',
    () => {
      const open = menu.getAttribute('aria-expanded') !== 'true';
      menu.setAttribute('aria-expanded', String(open));
      nav.classList.toggle('open', open);
    },
    { class: 'menu-button', 'aria-expanded': 'false', 'aria-controls': 'main-nav' },
  );
  const header = h(
    'header',
    { class: 'top' },
    h('a', { href: '#main', class: 'skip' }, 'Skip to content'),
    menu,
    h('span', { class: 'brand' }, 'Ledge'),
    h('label', { for: 'account-select' }, 'Account'),
    accountSelect,
    h('span', { class: 'who' }, state.session?.email ?? '', state.session?.read_only ? ' (read-only)' : ''),
    signOut,
  );
  replace(app, header, h('div', { class: 'layout' }, nav, h('div', { class: 'content' }, banner, main)));

  const show = () => {
    // A page chosen from the folded menu closes it.
    menu.setAttribute('aria-expanded', 'false');
    nav.classList.remove('open');
    // Arriving at a Load Balancing page opens its group, so the current page shows in the navigation.
    if (location.hash.startsWith('#/lb') && traffic.getAttribute('aria-expanded') !== 'true') {
      traffic.setAttribute('aria-expanded', 'true');
      trafficLinks.hidden = false;
    }
    for (const link of Array.from(nav.querySelectorAll('a'))) {
      const target = link.getAttribute('href') ?? '';
      const current =
        target === '#/' ? location.hash === '' || location.hash === '#/' : location.hash.startsWith(target);
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    void refreshBanner(banner);
    const view = routeView(currentRoute());
    replace(main, pageView('Loading…'));
    view(main).then(
      () => main.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true }),
      (error: unknown) => replace(main, pageView('Something went wrong', h('p', { role: 'alert' }, errorText(error)))),
    );
  };
  window.onhashchange = show;
  window.addEventListener('ledge:legacy-changed', () => void refreshBanner(banner));
  show();
  startLive();
}

/** "Legacy notification emails remain": shown on every page while any pool of the account keeps one. */
async function refreshBanner(banner: HTMLElement): Promise<void> {
  try {
    const status = await get<{ complete: boolean; pools_with_legacy_email: number }>(
      `${acct()}/alerting/v3/legacy_migration`,
    );
    if (status.complete) {
      replace(banner);
      return;
    }
    replace(
      banner,
      h(
        'div',
        { class: 'banner', role: 'region', 'aria-label': 'Legacy notification emails' },
        `${status.pools_with_legacy_email} pool(s) still use the deprecated notification_email. `,
        h('a', { href: href('notifications', 'migration') }, 'Migrate to notifications'),
      ),
    );
  } catch {
    replace(banner);
  }
}

export { go };
