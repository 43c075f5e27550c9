// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { renderBuckets } from './buckets.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

describe('the bucket list, drawn from its data', () => {
  it('names each location instead of its code, a bucket name stays text, and create sends the name', () => {
    signedInAs(state, {});
    const create = vi.fn(async () => undefined);
    const markup = '<img src=x onerror=alert(1)>';
    const view = renderBuckets(
      [
        { name: 'photos', creation_date: '', location: 'enam' },
        { name: markup, creation_date: '' },
      ],
      { create, remove: async () => undefined },
    );
    expect(cellTexts([view]).map((row) => row.slice(0, 4))).toEqual([
      ['photos', '', 'Eastern North America (ENAM)', 'Standard'],
      [markup, '', 'Automatic', 'Standard'],
    ]);
    expect(view.querySelector('img')).toBeNull();
    labelled(view, 'Bucket name').value = 'new-bucket';
    submit(view);
    expect(create).toHaveBeenCalledWith('new-bucket');
  });

  it('says how to start when there is no bucket', () => {
    signedInAs(state, {});
    const view = renderBuckets([], { create: async () => undefined, remove: async () => undefined });
    expect(cellTexts([view])).toEqual([['No buckets yet: create one above.']]);
  });
});
