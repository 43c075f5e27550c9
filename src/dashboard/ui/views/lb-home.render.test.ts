// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { renderLoadBalancingHome } from './lb-home.render.ts';

describe('the Load Balancing entry page, drawn from its counts', () => {
  it("links each area by the Cloudflare dashboard's names, with the account's counts", () => {
    const view = renderLoadBalancingHome({ pools: 3, monitors: 1 });
    expect(view.querySelector('h1')?.textContent).toBe('Load Balancing');
    const tiles = Array.from(view.querySelectorAll('.tiles li')).map((li) => ({
      link: li.querySelector('a')?.textContent,
      href: li.querySelector('a')?.getAttribute('href'),
      text: li.querySelector('p')?.textContent,
    }));
    expect(tiles).toEqual([
      { link: 'Manage Pools', href: expect.stringMatching(/lb\/pools$/), text: '3 pool(s)' },
      { link: 'Manage Monitors', href: expect.stringMatching(/lb\/monitors$/), text: '1 monitor(s)' },
      {
        link: 'Load Balancers',
        href: expect.stringMatching(/lb\/balancers$/),
        text: 'Per zone, with their pools and steering',
      },
    ]);
  });
});
