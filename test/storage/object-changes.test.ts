import { describe, expect, it } from 'vitest';
import { ObjectChanges } from '../../src/storage/index.ts';
import type { BucketRecord } from '../../src/storage/index.ts';

const bucket = { id: 'b1', accountId: 'a', name: 'photos' } as BucketRecord;

describe('ObjectChanges (what the functions runtime may have cached, issue 31)', () => {
  it('tells listeners about watched keys only, once, and waits for them', async () => {
    const changes = new ObjectChanges();
    const seen: unknown[] = [];
    let release!: () => void;
    let told!: () => void;
    const listenerCalled = new Promise<void>((r) => (told = r));
    changes.onChange(async (b, keys) => {
      seen.push([b?.name, keys]);
      told();
      await new Promise<void>((r) => (release = r));
    });
    changes.watch(bucket, 'k1');
    changes.watch(bucket, 'k2');
    // Writes check `concerns` first and skip `changed` when it says no (watchedStore).
    expect(changes.concerns('b1', ['nope'])).toBe(false);
    expect(changes.concerns('b2', ['k1'])).toBe(false);
    expect(changes.concerns('b1', ['nope', 'k2'])).toBe(true);
    await changes.changed('b1', ['nope']);
    expect(seen).toEqual([]);
    let done = false;
    const pending = changes.changed('b1', ['k1', 'k3']).then(() => (done = true));
    await listenerCalled;
    expect(seen).toEqual([['photos', ['k1']]]);
    expect(done).toBe(false);
    release();
    await pending;
    // Forgotten once invalidated: a second write to it tells nobody.
    expect(changes.concerns('b1', ['k1'])).toBe(false);
    await changes.changed('b1', ['k1']);
    expect(seen).toHaveLength(1);
    expect(changes.watchedKeys).toBe(1);
  });

  it('past its bound drops everything everywhere, and keeps the old watches until that is done', async () => {
    const changes = new ObjectChanges(2);
    const seen: unknown[] = [];
    let releaseReset!: () => void;
    changes.onChange(async (_bucket, keys) => {
      seen.push(keys ?? 'all');
      if (keys === undefined) await new Promise<void>((r) => (releaseReset = r));
    });
    changes.watch(bucket, 'k1');
    changes.watch(bucket, 'k2');
    changes.watch(bucket, 'k3');
    expect(seen).toEqual(['all']);
    // While everything is being dropped, a write to an old watch still waits for its own invalidation.
    expect(changes.concerns('b1', ['k1'])).toBe(true);
    await changes.changed('b1', ['k1']);
    expect(seen).toEqual(['all', ['k1']]);
    changes.watch(bucket, 'k4');
    releaseReset();
    // One turn of the event loop: the reset's own continuation (it forgets the old watches once every
    // listener is done) has no promise a caller can await.
    await new Promise((r) => setTimeout(r, 0));
    // Afterwards the old watches are gone (their copies too); the new one stays.
    expect(changes.concerns('b1', ['k2'])).toBe(false);
    expect(changes.concerns('b1', ['k4'])).toBe(true);
    await changes.changed('b1', ['k2', 'k4']);
    expect(seen).toEqual(['all', ['k1'], ['k4']]);
  });

  it('watches listings per bucket: the next write to any key of it waits, other buckets pay nothing', async () => {
    const changes = new ObjectChanges();
    const seen: unknown[] = [];
    changes.onChange(async (b, keys, lists) => {
      seen.push([b?.name, keys, lists]);
    });
    changes.watchLists(bucket);
    changes.watch(bucket, 'k1');
    expect(changes.concerns('b2', ['x'])).toBe(false);
    await changes.changed('b2', ['x']);
    expect(seen).toEqual([]);
    // A listed bucket: a write to any key must wait.
    expect(changes.concerns('b1', ['x'])).toBe(true);
    await changes.changed('b1', ['x']);
    expect(seen).toEqual([['photos', [], true]]);
    // Listings forgotten once dropped (until listed again); the watched key still is.
    expect(changes.concerns('b1', ['y'])).toBe(false);
    await changes.changed('b1', ['y']);
    expect(seen).toHaveLength(1);
    await changes.changed('b1', ['k1']);
    expect(seen).toEqual([
      ['photos', [], true],
      ['photos', ['k1'], false],
    ]);
    // A deleted bucket's listings go (a bucket made again under the name has another id).
    changes.watchLists(bucket);
    await changes.bucketDeleted('a', 'other');
    expect(seen).toHaveLength(2);
    await changes.bucketDeleted('a', 'photos');
    expect(seen[2]).toEqual(['photos', [], true]);
  });
});
