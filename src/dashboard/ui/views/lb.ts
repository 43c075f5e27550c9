import { enc, get, page, patch, post } from '../api.ts';
import { button, checkbox, field, h, replace, table, uid } from '../dom.ts';
import { onHealth } from '../live.ts';
import { go, href } from '../router.ts';
import { acct } from '../state.ts';
import { guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

export interface Origin {
  name: string;
  address: string;
  enabled: boolean;
  weight: number;
}
export interface Pool {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  healthy?: boolean | null;
  monitor?: string | null;
  origins: Origin[];
  notification_email: string;
  minimum_origins: number;
}
interface Monitor {
  id: string;
  type: string;
  description: string;
  path?: string;
  interval: number;
  expected_codes?: string;
}
interface PoolHealth {
  pool_id: string;
  pop_health: Record<
    string,
    {
      healthy: boolean;
      origins: Record<string, { healthy: boolean; rtt?: string; failure_reason: string; response_code?: number }>[];
    }
  >;
}

const lbPath = () => `${acct()}/load_balancers`;

/** "Traffic" > "Load Balancing": the entry page, with the Cloudflare dashboard's own link names. */
export async function loadBalancingHome(main: HTMLElement): Promise<void> {
  const [pools, monitors] = await Promise.all([
    page<Pool>(`${lbPath()}/pools`, 1, 1),
    get<Monitor[]>(`${lbPath()}/monitors`),
  ]);
  replace(
    main,
    pageView(
      'Load Balancing',
      h(
        'ul',
        { class: 'tiles' },
        h(
          'li',
          null,
          h('a', { href: href('lb', 'pools') }, 'Manage Pools'),
          h('p', null, `${pools.totalCount} pool(s)`),
        ),
        h(
          'li',
          null,
          h('a', { href: href('lb', 'monitors') }, 'Manage Monitors'),
          h('p', null, `${monitors.length} monitor(s)`),
        ),
        h(
          'li',
          null,
          h('a', { href: href('lb', 'balancers') }, 'Load Balancers'),
          h('p', null, 'Per zone, with their pools and steering'),
        ),
      ),
    ),
  );
}

export function healthLabel(healthy: boolean | null | undefined, enabled = true): HTMLElement {
  if (!enabled) return h('span', { class: 'badge muted' }, 'Disabled');
  if (healthy === false) return h('span', { class: 'badge bad' }, 'Unhealthy');
  if (healthy === true) return h('span', { class: 'badge good' }, 'Healthy');
  return h('span', { class: 'badge muted' }, 'No data');
}

/** "Manage Pools": every pool, a page at a time, each with "Edit"; health follows live. */
export async function managePools(main: HTMLElement, pageNumber = 1): Promise<void> {
  const result = await page<Pool>(`${lbPath()}/pools`, pageNumber, 25);
  const rows = result.items.map((pool) => [
    h('span', { class: 'name' }, pool.name),
    h('span', { 'data-pool-health': pool.id }, healthLabel(pool.healthy, pool.enabled)),
    String(pool.origins.length),
    pool.notification_email ? h('span', { class: 'badge warn' }, 'Legacy email') : '',
    h('a', { href: href('lb', 'pools', pool.id), 'aria-describedby': undefined, class: 'button' }, 'Edit'),
  ]);
  const view = pageView(
    'Manage Pools',
    h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
    table(`Pools (${result.totalCount})`, ['Pool', 'Health', 'Origins', 'Notifications', 'Actions'], rows),
    pager(result.page, result.totalPages, (next) => void managePools(main, next)),
    h('h2', null, 'Create a pool'),
    createPoolForm(),
  );
  replace(main, view);
  // The pool list carries no health: each checked pool's own health answer fills its cell.
  for (const pool of result.items) {
    if (!pool.enabled || !pool.monitor) continue;
    void get<PoolHealth>(`${lbPath()}/pools/${enc(pool.id)}/health`).then(
      (health) => {
        const region = Object.values(health.pop_health)[0];
        const cell = view.querySelector(`[data-pool-health="${CSS.escape(pool.id)}"]`);
        if (region && cell) replace(cell, healthLabel(region.healthy));
      },
      () => undefined,
    );
  }
  onHealth(view, (change) => {
    if (change.event_source !== 'pool') return;
    const cell = view.querySelector(`[data-pool-health="${CSS.escape(change.pool_id)}"]`);
    if (cell) replace(cell, healthLabel(change.new_health === 'Healthy'));
  });
}

function createPoolForm(): HTMLFormElement {
  const name = field('Pool name', { required: true });
  const originName = field('Origin name', { required: true, value: 'origin-1' });
  const address = field('Origin address', { required: true, placeholder: '192.0.2.10 or app.example.com' });
  const status = notice();
  const form = h(
    'form',
    { class: 'card' },
    name.row,
    originName.row,
    address.row,
    h('button', { type: 'submit' }, 'Create pool'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post<Pool>(`${lbPath()}/pools`, {
      name: name.input.value,
      origins: [{ name: originName.input.value, address: address.input.value }],
    }).then(
      (pool) => go(href('lb', 'pools', pool.id)),
      (error: unknown) => status.fail(error),
    );
  });
  return guardForm(form);
}

/** A pool's edit view: its settings, each origin's live health and RTT, and "Create a Health Alert". */
export async function editPool(main: HTMLElement, poolId: string): Promise<void> {
  const [pool, monitors] = await Promise.all([
    get<Pool>(`${lbPath()}/pools/${enc(poolId)}`),
    get<Monitor[]>(`${lbPath()}/monitors`),
  ]);
  const healthBox = h('div', { 'aria-live': 'polite' });
  const name = field('Name', { value: pool.name, required: true });
  const description = field('Description', { value: pool.description });
  const enabled = checkbox('Enabled', pool.enabled);
  const monitorId = uid();
  const monitor = h(
    'select',
    { id: monitorId },
    h('option', { value: '' }, 'No monitor'),
    monitors.map((m) =>
      h(
        'option',
        { value: m.id, selected: m.id === pool.monitor },
        `${m.type.toUpperCase()} ${m.path ?? ''} ${m.description}`,
      ),
    ),
  );
  const origins = pool.origins.map((origin) => ({
    origin,
    name: field('Origin name', { value: origin.name }),
    address: field('Address', { value: origin.address }),
    weight: field('Weight', { value: origin.weight, type: 'number', min: 0, max: 1, step: 0.01 }),
    enabled: checkbox('Origin enabled', origin.enabled),
  }));
  const status = notice();
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Pool settings' },
    name.row,
    description.row,
    enabled.row,
    h('div', { class: 'field' }, h('label', { for: monitorId }, 'Monitor'), monitor),
    h(
      'fieldset',
      null,
      h('legend', null, 'Origins'),
      origins.map((o) => h('div', { class: 'origin-row' }, o.name.row, o.address.row, o.weight.row, o.enabled.row)),
    ),
    pool.notification_email
      ? h(
          'p',
          { class: 'notice warn' },
          'Legacy notification_email: ',
          h('code', null, pool.notification_email),
          ' (deprecated: use a health alert and the migration).',
        )
      : null,
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    patch<Pool>(`${lbPath()}/pools/${enc(pool.id)}`, {
      name: name.input.value,
      description: description.input.value,
      enabled: enabled.input.checked,
      monitor: monitor.value || null,
      origins: origins.map((o) => ({
        ...o.origin,
        name: o.name.input.value,
        address: o.address.input.value,
        weight: Number(o.weight.input.value),
        enabled: o.enabled.input.checked,
      })),
    }).then(
      () => status.ok('Saved.'),
      (error: unknown) => status.fail(error),
    );
  });
  const view = pageView(
    `Edit pool ${pool.name}`,
    h('p', null, h('a', { href: href('lb', 'pools') }, '← Manage Pools')),
    h(
      'div',
      { class: 'actions' },
      writeButton('Create a Health Alert', () =>
        go(`${href('notifications', 'new')}?alert_type=load_balancing_health_alert&pool=${enc(pool.id)}`),
      ),
      h('a', { href: href('lb', 'pools', pool.id, 'charts'), class: 'button' }, 'Health and RTT charts'),
    ),
    h('h2', null, 'Health'),
    healthBox,
    h('h2', null, 'Settings'),
    guardForm(form),
  );
  replace(main, view);
  const refresh = () => void showHealth(healthBox, pool).catch(() => undefined);
  await showHealth(healthBox, pool);
  onHealth(view, (change) => {
    if (change.pool_id === pool.id) refresh();
  });
  // RTT changes without a transition; a slow poll keeps it current while the page is open.
  const timer = setInterval(() => (view.isConnected ? refresh() : clearInterval(timer)), 5_000);
}

async function showHealth(box: HTMLElement, pool: Pool): Promise<void> {
  const health = await get<PoolHealth>(`${lbPath()}/pools/${enc(pool.id)}/health`);
  const region = Object.values(health.pop_health)[0];
  if (!region) {
    replace(box, h('p', null, 'Not checked (no monitor, a disabled pool, or an ICMP monitor).'));
    return;
  }
  const byAddress = new Map<
    string,
    { healthy: boolean; rtt?: string; failure_reason: string; response_code?: number }
  >();
  for (const entry of region.origins)
    for (const [address, value] of Object.entries(entry)) byAddress.set(address, value);
  replace(
    box,
    h('p', { class: 'pool-health' }, 'Pool: ', healthLabel(region.healthy)),
    table(
      'Origins',
      ['Origin', 'Address', 'Health', 'RTT', 'Reason'],
      pool.origins
        .filter((o) => o.enabled)
        .map((origin) => {
          const state = byAddress.get(origin.address);
          return [
            origin.name,
            origin.address,
            healthLabel(state?.healthy),
            state?.rtt ?? '',
            state?.failure_reason ?? '',
          ];
        }),
    ),
  );
}

/** "Manage Monitors": list and create. */
export async function manageMonitors(main: HTMLElement): Promise<void> {
  const monitors = await get<Monitor[]>(`${lbPath()}/monitors`);
  const type = field('Type', { value: 'http', list: 'monitor-types' });
  const path = field('Path', { value: '/' });
  const interval = field('Interval (seconds)', { value: 60, type: 'number', min: 5 });
  const codes = field('Expected codes', { value: '2xx' });
  const status = notice();
  const form = h(
    'form',
    { class: 'card' },
    type.row,
    h(
      'datalist',
      { id: 'monitor-types' },
      ['http', 'https', 'tcp'].map((t) => h('option', { value: t })),
    ),
    path.row,
    interval.row,
    codes.row,
    h('button', { type: 'submit' }, 'Create monitor'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { type: type.input.value, interval: Number(interval.input.value) };
    if (type.input.value !== 'tcp') Object.assign(body, { path: path.input.value, expected_codes: codes.input.value });
    post(`${lbPath()}/monitors`, body).then(
      () => void manageMonitors(main),
      (error: unknown) => status.fail(error),
    );
  });
  replace(
    main,
    pageView(
      'Manage Monitors',
      h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
      table(
        'Monitors',
        ['Type', 'Path', 'Interval', 'Expected codes', 'Description', 'ID'],
        monitors.map((m) => [
          m.type,
          m.path ?? '',
          `${m.interval}s`,
          m.expected_codes ?? '',
          m.description,
          h('code', null, m.id),
        ]),
      ),
      h('h2', null, 'Create a monitor'),
      guardForm(form),
    ),
  );
}

interface LoadBalancer {
  id: string;
  name: string;
  enabled: boolean;
  default_pools: string[];
  fallback_pool: string;
  steering_policy?: string;
  proxied?: boolean;
}

/** Load balancers of every zone of the account, with their pools and steering. */
export async function loadBalancers(main: HTMLElement): Promise<void> {
  const zones = await get<{ id: string; name: string; account: { id: string } }[]>('/zones', {
    'account.id': undefined,
    per_page: 50,
  });
  const mine = zones.filter((z) => z.account.id === acct().split('/')[2]);
  const sections = await Promise.all(
    mine.map(async (zone) => {
      const balancers = await get<LoadBalancer[]>(`/zones/${enc(zone.id)}/load_balancers`);
      return [
        h('h2', null, zone.name),
        table(
          `Load balancers in ${zone.name}`,
          ['Hostname', 'Enabled', 'Default pools', 'Fallback pool', 'Steering'],
          balancers.map((lb) => [
            lb.name,
            lb.enabled ? 'Yes' : 'No',
            h(
              'ul',
              null,
              lb.default_pools.map((id) => h('li', null, h('a', { href: href('lb', 'pools', id) }, id))),
            ),
            lb.fallback_pool,
            lb.steering_policy || 'off',
          ]),
        ),
      ];
    }),
  );
  replace(
    main,
    pageView(
      'Load Balancers',
      h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
      mine.length === 0 ? h('p', null, 'No zones yet: load balancers live in a zone (see Zones).') : sections,
    ),
  );
}

export { button };
