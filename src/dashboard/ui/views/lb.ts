import {
  createMonitor,
  createPool,
  getPool,
  getPoolHealth,
  listLoadBalancers,
  listMonitors,
  listPools,
  listZones,
  updatePool,
  type Pool,
} from '../../../client/index.ts';
import { client, page } from '../api.ts';
import { replace } from '../dom.ts';
import { onHealth } from '../live.ts';
import { go, href } from '../router.ts';
import { acct, state } from '../state.ts';
import { renderLoadBalancingHome } from './lb-home.render.ts';
import {
  healthLabel,
  renderLoadBalancers,
  renderMonitors,
  renderPoolEditor,
  renderPoolHealth,
  renderPoolList,
} from './pools.render.ts';

/** The Load Balancing pages' data: loaded and saved through the client; pools.render.ts draws them. */

const lbPath = () => `${acct()}/load_balancers`;

/** "Traffic" > "Load Balancing": the entry page's counts, loaded; lb-home.render.ts draws it. */
export async function loadBalancingHome(main: HTMLElement): Promise<void> {
  const [pools, monitors] = await Promise.all([
    page<Pool>(`${lbPath()}/pools`, 1, 1),
    listMonitors(client, state.accountId),
  ]);
  replace(main, renderLoadBalancingHome({ pools: pools.totalCount, monitors: monitors.length }));
}

/** "Manage Pools": every pool, a page at a time, each with "Edit"; health follows live. */
export async function managePools(main: HTMLElement, pageNumber = 1): Promise<void> {
  const result = await page<Pool>(`${lbPath()}/pools`, pageNumber, 25);
  const view = renderPoolList(result, {
    showPage: (next) => void managePools(main, next),
    create: async ({ name, origin }) => {
      const pool = await createPool(client, state.accountId, { name, origins: [origin] });
      go(href('lb', 'pools', pool.id));
    },
  });
  replace(main, view);
  const cellOf = (id: string) => view.querySelector(`[data-pool-health="${CSS.escape(id)}"]`);
  // The pool list carries no health: each checked pool's own health answer fills its cell.
  for (const pool of result.items) {
    if (!pool.enabled || !pool.monitor) continue;
    void getPoolHealth(client, state.accountId, pool.id).then(
      (health) => {
        const region = Object.values(health.pop_health)[0];
        const cell = cellOf(pool.id);
        if (region && cell) replace(cell, healthLabel(region.healthy));
      },
      () => undefined,
    );
  }
  onHealth(view, (change) => {
    if (change.event_source !== 'pool') return;
    const cell = cellOf(change.pool_id);
    if (cell) replace(cell, healthLabel(change.new_health === 'Healthy'));
  });
}

/** A pool's edit view: its settings, each origin's live health and RTT, and "Create a Health Alert". */
export async function editPool(main: HTMLElement, poolId: string): Promise<void> {
  const [pool, monitors] = await Promise.all([
    getPool(client, state.accountId, poolId),
    listMonitors(client, state.accountId),
  ]);
  const { view, healthBox } = renderPoolEditor(
    { pool, monitors },
    {
      save: async (changes) => {
        const saved = await updatePool(client, state.accountId, pool.id, { ...changes });
        Object.assign(pool, saved);
        refresh();
      },
      createAlert: () =>
        go(
          `${href('notifications', 'new')}?alert_type=load_balancing_health_alert&pool=${encodeURIComponent(pool.id)}`,
        ),
    },
  );
  replace(main, view);
  const showHealth = async () =>
    replace(healthBox, ...renderPoolHealth(pool, await getPoolHealth(client, state.accountId, pool.id)));
  const refresh = () => void showHealth().catch(() => undefined);
  await showHealth();
  onHealth(view, (change) => {
    if (change.pool_id === pool.id) refresh();
  });
  // RTT changes without a transition; a slow poll keeps it current while the page is open.
  const timer = setInterval(() => (view.isConnected ? refresh() : clearInterval(timer)), 5_000);
}

/** "Manage Monitors": list and create. */
export async function manageMonitors(main: HTMLElement): Promise<void> {
  const monitors = await listMonitors(client, state.accountId);
  replace(
    main,
    renderMonitors(monitors, {
      create: async (body) => {
        await createMonitor(client, state.accountId, body);
        await manageMonitors(main);
      },
    }),
  );
}

/** Load balancers of every zone of the account, with their pools by name. */
export async function loadBalancers(main: HTMLElement): Promise<void> {
  const [zones, pools] = await Promise.all([
    listZones(client, { accountId: state.accountId }),
    listPools(client, state.accountId),
  ]);
  const poolNames = new Map(pools.map((p) => [p.id, p.name]));
  const sections = await Promise.all(
    zones
      .filter((zone) => zone.account.id === state.accountId)
      .map(async (zone) => ({ name: zone.name, balancers: await listLoadBalancers(client, zone.id) })),
  );
  replace(main, renderLoadBalancers(sections, poolNames));
}
