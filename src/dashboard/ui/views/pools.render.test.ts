// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { LoadBalancer, Pool, PoolHealth } from '../../../client/index.ts';
import { state } from '../state.ts';
import {
  originTarget,
  regionName,
  renderLoadBalancers,
  renderPoolEditor,
  renderPoolHealth,
  renderPoolList,
} from './pools.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

const pool = (origins: Pool['origins']): Pool => ({
  id: 'p1',
  name: 'web',
  description: '',
  enabled: true,
  minimum_origins: 1,
  monitor: 'm1',
  notification_email: '',
  created_on: '2026-01-01T00:00:00Z',
  modified_on: '2026-01-01T00:00:00Z',
  origins,
});
const origin = (name: string, address: string, port?: number) => ({ name, address, port, enabled: true, weight: 1 });

describe('the pool pages, drawn from their data', () => {
  it("tells apart two origins on one address by their ports: each row shows its own health, never its neighbour's", () => {
    const twoPorts = pool([origin('live', '127.0.0.1', 8081), origin('dead', '127.0.0.1', 8082)]);
    const health: PoolHealth = {
      pool_id: 'p1',
      pop_health: {
        local: {
          healthy: true,
          origins: [
            { '127.0.0.1': { healthy: true, failure_reason: 'No failures', rtt: '1.0ms' } },
            { '127.0.0.1': { healthy: false, failure_reason: 'TCP connection failed' } },
          ],
        },
      },
    };
    const rows = cellTexts(renderPoolHealth(twoPorts, health));
    expect(rows).toEqual([
      ['live', '127.0.0.1:8081', 'Healthy', '1.0ms', 'No failures'],
      ['dead', '127.0.0.1:8082', 'Unhealthy', '', 'TCP connection failed'],
    ]);
  });

  it('shows "No data" for an origin the health answer does not list at its place (never a borrowed state)', () => {
    const changed = pool([origin('a', '192.0.2.1'), origin('b', '192.0.2.2')]);
    const health: PoolHealth = {
      pool_id: 'p1',
      pop_health: { local: { healthy: true, origins: [{ '192.0.2.9': { healthy: true, failure_reason: '' } }] } },
    };
    expect(cellTexts(renderPoolHealth(changed, health)).map((row) => row[2])).toEqual(['No data', 'No data']);
  });

  it('names where the checks run from instead of a bare code', () => {
    const health: PoolHealth = { pool_id: 'p1', pop_health: { local: { healthy: true, origins: [] } } };
    const text = renderPoolHealth(pool([]), health)
      .map((e) => e.textContent)
      .join(' ');
    expect(text).toContain('checked from this server (local)');
    expect(regionName('WNAM')).toBe('Western North America (WNAM)');
    expect(regionName('XYZ')).toBe('XYZ');
  });

  it('writes IPv6 origins with a port in brackets, and an address alone without one', () => {
    expect(originTarget({ address: '2001:db8::1', port: 8443 })).toBe('[2001:db8::1]:8443');
    expect(originTarget({ address: 'app.example.com', port: 0 })).toBe('app.example.com');
  });

  it("the create form sends the origin's port when one is given", async () => {
    signedInAs(state, { read_only: false });
    const create = vi.fn(async () => undefined);
    const view = renderPoolList({ items: [], page: 1, totalPages: 1, totalCount: 0 }, { showPage: () => {}, create });
    document.body.replaceChildren(view);
    labelled(view, 'Pool name').value = 'web';
    labelled(view, 'Origin address').value = '127.0.0.1';
    labelled(view, 'Port').value = '8082';
    submit(view);
    expect(create).toHaveBeenCalledWith({
      name: 'web',
      origin: { name: 'origin-1', address: '127.0.0.1', port: 8082 },
    });
    expect(cellTexts([view])).toEqual([['No pools yet.']]);
  });

  it("the edit form keeps each origin's port and changes it when edited", async () => {
    signedInAs(state, { read_only: false });
    const save = vi.fn(async () => undefined);
    const { view } = renderPoolEditor(
      { pool: pool([origin('a', '127.0.0.1', 8081), origin('b', '127.0.0.1')]), monitors: [] },
      { save, createAlert: () => {} },
    );
    document.body.replaceChildren(view);
    const ports = Array.from(view.querySelectorAll<HTMLInputElement>('.origin-row input[type=number][max="65535"]'));
    expect(ports.map((p) => p.value)).toEqual(['8081', '']);
    ports[1]!.value = '9000';
    submit(view);
    expect(save).toHaveBeenCalledOnce();
    const sent = save.mock.calls[0] as unknown as [{ origins: { port?: number }[] }];
    expect(sent[0].origins.map((o) => o.port)).toEqual([8081, 9000]);
  });

  it("lists a load balancer's pools by name, linked, and says so when a pool is gone", () => {
    const lb = {
      id: 'lb1',
      name: 'www.example.com',
      enabled: true,
      default_pools: ['p1', 'p2'],
      fallback_pool: 'p1',
      steering_policy: 'off',
    } as LoadBalancer;
    const view = renderLoadBalancers([{ name: 'example.com', balancers: [lb] }], new Map([['p1', 'web']]));
    expect(cellTexts([view])).toEqual([['www.example.com', 'Yes', 'webp2 (no such pool)', 'web', 'off']]);
    expect(Array.from(view.querySelectorAll('td a')).map((a) => a.getAttribute('href'))).toEqual([
      '#/lb/pools/p1',
      '#/lb/pools/p2',
      '#/lb/pools/p1',
    ]);
  });
});
