import type { LoadBalancer, Monitor, Origin, OriginHealth, Pool, PoolHealth } from '../../../client/index.ts';
import { checkbox, field, h, table, uid } from '../dom.ts';
import { href } from '../router.ts';
import { guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

/**
 * The pool pages drawn from their data, nothing loaded here: lb.ts loads and saves through the client and hands
 * these functions what they show and what to call on submit.
 */

export function healthLabel(healthy: boolean | null | undefined, enabled = true): HTMLElement {
  if (!enabled) return h('span', { class: 'badge muted' }, 'Disabled');
  if (healthy === false) return h('span', { class: 'badge bad' }, 'Unhealthy');
  if (healthy === true) return h('span', { class: 'badge good' }, 'Healthy');
  return h('span', { class: 'badge muted' }, 'No data');
}

/** Where an origin is reached: its address, and its port when it names one (0 or none: the monitor's default). */
export function originTarget(origin: Pick<Origin, 'address' | 'port'>): string {
  if (!origin.port) return origin.address;
  return `${origin.address.includes(':') ? `[${origin.address}]` : origin.address}:${origin.port}`;
}

/** What a pool form sends for one origin: the port only when one is given. */
export interface OriginInput {
  name: string;
  address: string;
  port?: number;
  weight?: number;
  enabled?: boolean;
}

function portField(value?: number) {
  return field(
    'Port',
    { type: 'number', min: 1, max: 65535, value: value || undefined, placeholder: 'default' },
    "Empty: the monitor's port, or the scheme's",
  );
}

function readPort(input: HTMLInputElement): number | undefined {
  return input.value.trim() === '' ? undefined : Number(input.value);
}

export interface PoolListData {
  items: Pool[];
  page: number;
  totalPages: number;
  totalCount: number;
}

/** "Manage Pools": a page of pools, each health cell named for live updates, and the create form. */
export function renderPoolList(
  data: PoolListData,
  actions: { showPage(page: number): void; create(input: { name: string; origin: OriginInput }): Promise<unknown> },
): HTMLElement {
  const rows = data.items.map((pool) => [
    h('span', { class: 'name' }, pool.name),
    h('span', { 'data-pool-health': pool.id }, healthLabel(undefined, pool.enabled)),
    String(pool.origins.length),
    pool.notification_email ? h('span', { class: 'badge warn' }, 'Legacy email') : '',
    h('a', { href: href('lb', 'pools', pool.id), class: 'button' }, 'Edit'),
  ]);
  return pageView(
    'Manage Pools',
    h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
    table(
      `Pools (${data.totalCount})`,
      ['Pool', 'Health', 'Origins', 'Notifications', 'Actions'],
      rows,
      'No pools yet.',
    ),
    pager(data.page, data.totalPages, actions.showPage),
    h('h2', null, 'Create a pool'),
    createPoolForm(actions.create),
  );
}

function createPoolForm(create: (input: { name: string; origin: OriginInput }) => Promise<unknown>): HTMLFormElement {
  const name = field('Pool name', { required: true });
  const originName = field('Origin name', { required: true, value: 'origin-1' });
  const address = field('Origin address', { required: true, placeholder: '192.0.2.10 or app.example.com' });
  const port = portField();
  const status = notice();
  const form = h(
    'form',
    { class: 'card' },
    name.row,
    originName.row,
    address.row,
    port.row,
    h('button', { type: 'submit' }, 'Create pool'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const origin: OriginInput = { name: originName.input.value, address: address.input.value };
    const chosenPort = readPort(port.input);
    if (chosenPort !== undefined) origin.port = chosenPort;
    create({ name: name.input.value, origin }).catch((error: unknown) => status.fail(error));
  });
  return guardForm(form);
}

export interface PoolChanges {
  name: string;
  description: string;
  enabled: boolean;
  monitor: string | null;
  origins: (Origin & { port?: number })[];
}

/** A pool's edit page: links, the health box (filled by `renderPoolHealth`) and the settings form. */
export function renderPoolEditor(
  data: { pool: Pool; monitors: Monitor[] },
  actions: { save(changes: PoolChanges): Promise<unknown>; createAlert(): void },
): { view: HTMLElement; healthBox: HTMLElement } {
  const { pool, monitors } = data;
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
        `${m.type.toUpperCase()} ${m.path} ${m.description}`,
      ),
    ),
  );
  const origins = pool.origins.map((origin) => ({
    origin,
    name: field('Origin name', { value: origin.name }),
    address: field('Address', { value: origin.address }),
    port: portField(origin.port),
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
      origins.map((o) =>
        h('div', { class: 'origin-row' }, o.name.row, o.address.row, o.port.row, o.weight.row, o.enabled.row),
      ),
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
    actions
      .save({
        name: name.input.value,
        description: description.input.value,
        enabled: enabled.input.checked,
        monitor: monitor.value || null,
        origins: origins.map((o) => {
          const { port: _port, ...kept } = o.origin;
          const port = readPort(o.port.input);
          return {
            ...kept,
            name: o.name.input.value,
            address: o.address.input.value,
            ...(port === undefined ? {} : { port }),
            weight: Number(o.weight.input.value),
            enabled: o.enabled.input.checked,
          };
        }),
      })
      .then(
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
      writeButton('Create a Health Alert', actions.createAlert),
      h('a', { href: href('lb', 'pools', pool.id, 'charts'), class: 'button' }, 'Health and RTT charts'),
    ),
    h('h2', null, 'Health'),
    healthBox,
    h('h2', null, 'Settings'),
    guardForm(form),
  );
  return { view, healthBox };
}

/**
 * A pool's health and each enabled origin's own: the health answer lists the enabled origins in the pool's
 * order, so each row takes the entry at its position (two origins on one address, on different ports, are two
 * entries), and the address it is keyed by must match, or the row says "No data" rather than borrow another's.
 */
export function renderPoolHealth(pool: Pool, health: PoolHealth): HTMLElement[] {
  const [region, state] = Object.entries(health.pop_health)[0] ?? [];
  if (!state) return [h('p', null, 'Not checked (no monitor, a disabled pool, or an ICMP monitor).')];
  const enabled = pool.origins.filter((o) => o.enabled);
  const rows = enabled.map((origin, index) => {
    const entry: OriginHealth | undefined = state.origins[index]?.[origin.address];
    return [
      origin.name,
      originTarget(origin),
      healthLabel(entry?.healthy),
      entry?.rtt ?? '',
      entry?.failure_reason ?? '',
    ];
  });
  return [
    h(
      'p',
      { class: 'pool-health' },
      'Pool: ',
      healthLabel(state.healthy),
      ' ',
      h('small', null, `checked from ${regionName(region ?? '')}`),
    ),
    table('Origins', ['Origin', 'Address', 'Health', 'RTT', 'Reason'], rows, 'No enabled origins.'),
  ];
}

/** Health check regions by name: Ledge checks from the server itself ("local"); Cloudflare's codes as it names them. */
const REGIONS: Record<string, string> = {
  local: 'this server (local)',
  WNAM: 'Western North America (WNAM)',
  ENAM: 'Eastern North America (ENAM)',
  WEU: 'Western Europe (WEU)',
  EEU: 'Eastern Europe (EEU)',
  NSAM: 'Northern South America (NSAM)',
  SSAM: 'Southern South America (SSAM)',
  OC: 'Oceania (OC)',
  ME: 'Middle East (ME)',
  NAF: 'Northern Africa (NAF)',
  SAF: 'Southern Africa (SAF)',
  SAS: 'Southern Asia (SAS)',
  SEAS: 'South East Asia (SEAS)',
  NEAS: 'North East Asia (NEAS)',
};
export function regionName(code: string): string {
  return REGIONS[code] ?? code;
}

/** "Manage Monitors": the list and the create form. */
export function renderMonitors(
  monitors: Monitor[],
  actions: { create(body: Record<string, unknown>): Promise<unknown> },
): HTMLElement {
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
    actions.create(body).catch((error: unknown) => status.fail(error));
  });
  return pageView(
    'Manage Monitors',
    h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
    table(
      'Monitors',
      ['Type', 'Path', 'Interval', 'Expected codes', 'Description', 'ID'],
      monitors.map((m) => [
        m.type,
        m.type === 'tcp' ? '' : m.path,
        `${m.interval}s`,
        m.type === 'tcp' ? '' : m.expected_codes,
        m.description,
        h('code', null, m.id),
      ]),
      'No monitors yet.',
    ),
    h('h2', null, 'Create a monitor'),
    guardForm(form),
  );
}

/** Load balancers by zone, their pools by name (each a link to the pool; an id only when the pool is gone). */
export function renderLoadBalancers(
  zones: { name: string; balancers: LoadBalancer[] }[],
  poolNames: ReadonlyMap<string, string>,
): HTMLElement {
  const poolLink = (id: string) =>
    h('a', { href: href('lb', 'pools', id) }, poolNames.get(id) ?? `${id} (no such pool)`);
  return pageView(
    'Load Balancers',
    h('p', null, h('a', { href: href('lb') }, '← Load Balancing')),
    zones.length === 0
      ? h('p', null, 'No zones yet: load balancers live in a zone (see Zones).')
      : zones.map((zone) => [
          h('h2', null, zone.name),
          table(
            `Load balancers in ${zone.name}`,
            ['Hostname', 'Enabled', 'Default pools', 'Fallback pool', 'Steering'],
            zone.balancers.map((lb) => [
              lb.name,
              lb.enabled ? 'Yes' : 'No',
              h(
                'ul',
                { class: 'plain' },
                lb.default_pools.map((id) => h('li', null, poolLink(id))),
              ),
              poolLink(lb.fallback_pool),
              lb.steering_policy || 'off',
            ]),
            'No load balancers in this zone yet.',
          ),
        ]),
  );
}
