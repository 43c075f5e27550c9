// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { Zone } from '../../../client/index.ts';
import { state } from '../state.ts';
import { renderOverview, renderZones } from './account.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

describe('the overview and zones pages, drawn from their data', () => {
  it('shows each area with its count, one link away', () => {
    const view = renderOverview({ buckets: 2, scripts: 0, pools: 1, policies: 3 });
    expect(Array.from(view.querySelectorAll('li')).map((li) => li.textContent)).toEqual([
      'R2 Object Storage2 bucket(s)',
      'Workers & Pages0 script(s)',
      'Load Balancing1 pool(s)',
      'Notifications3 polic(ies)',
    ]);
  });

  it('lists zones, says why the list is empty, and adds a zone by name', () => {
    signedInAs(state, {});
    const create = vi.fn(async () => undefined);
    const actions = { create, remove: async () => undefined, showPage: () => {} };
    const empty = renderZones({ items: [], page: 1, totalPages: 1, totalCount: 0 }, actions);
    expect(cellTexts([empty])).toEqual([['No zones yet: add one to put load balancers in it.']]);
    labelled(empty, 'Zone name').value = 'example.com';
    submit(empty);
    expect(create).toHaveBeenCalledWith('example.com');

    const zone = { id: 'z1', name: 'example.com', status: 'active', created_on: '' } as Zone;
    const listed = renderZones({ items: [zone], page: 1, totalPages: 1, totalCount: 1 }, actions);
    expect(cellTexts([listed])[0]!.slice(0, 4)).toEqual(['example.com', 'active', '', 'z1']);
  });

  it('a read-only token sees the form disabled', () => {
    signedInAs(state, { read_only: true });
    const view = renderZones(
      { items: [], page: 1, totalPages: 1, totalCount: 0 },
      { create: async () => undefined, remove: async () => undefined, showPage: () => {} },
    );
    expect(labelled(view, 'Zone name').disabled).toBe(true);
  });
});
