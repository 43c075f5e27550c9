import { afterEach, describe, expect, it } from 'vitest';
import {
  ChangeFeed,
  clusterMigrations,
  shardOwner,
  SqlLeaseStore,
  SqlNodeStore,
  type Change,
} from '../../src/cluster/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { systemClock } from '../../src/shared/clock.ts';

describe.each(BACKENDS)('cluster stores on %s', (backend) => {
  let test: TestDatabase;
  const open = async () => {
    test = await openTestDatabase(backend);
    await applyMigrations(test.db, clusterMigrations, systemClock);
    return test.db;
  };
  afterEach(async () => test?.close());

  it('leases: one holder at a time, renewed by it, taken over only after expiry, released early', async () => {
    const leases = new SqlLeaseStore(await open());
    expect(await leases.acquire('retention', 'node-a', 1_000, 10_000)).toBe(true);
    expect(await leases.acquire('retention', 'node-b', 1_000, 10_500)).toBe(false);
    expect(await leases.acquire('retention', 'node-a', 1_000, 10_900)).toBe(true); // renewed to 11,900
    expect(await leases.acquire('retention', 'node-b', 1_000, 11_500)).toBe(false);
    expect(await leases.holder('retention', 11_500)).toBe('node-a');
    expect(await leases.acquire('retention', 'node-b', 1_000, 11_900)).toBe(true); // expired: taken over
    expect(await leases.holder('retention', 12_000)).toBe('node-b');
    await leases.release('retention', 'node-a'); // not the holder any more: no effect
    expect(await leases.holder('retention', 12_000)).toBe('node-b');
    await leases.release('retention', 'node-b');
    expect(await leases.holder('retention', 12_000)).toBeUndefined();
    expect(await leases.acquire('retention', 'node-a', 1_000, 12_000)).toBe(true);
  });

  it('leases: of many nodes racing for a free lease, exactly one wins', async () => {
    const db = await open();
    const handles = [db, test.reopen(), test.reopen()];
    const attempts = Array.from({ length: 12 }, (_, i) =>
      new SqlLeaseStore(handles[i % handles.length]!).acquire('lifecycle', `node-${i}`, 5_000, 1_000),
    );
    expect((await Promise.all(attempts)).filter(Boolean)).toHaveLength(1);
  });

  it('nodes: live by heartbeat, gone when stale, when leaving, and pruned', async () => {
    const nodes = new SqlNodeStore(await open());
    await nodes.heartbeat('b', 1_000);
    await nodes.heartbeat('a', 1_000);
    await nodes.heartbeat('c', 1_000);
    await nodes.heartbeat('a', 5_000);
    await nodes.heartbeat('b', 5_000);
    expect(await nodes.liveNodes(5_500, 2_000)).toEqual(['a', 'b']);
    await nodes.leave('b');
    expect(await nodes.liveNodes(5_500, 2_000)).toEqual(['a']);
    expect(await nodes.prune(5_500, 3_000)).toBe(1); // c
    expect(await nodes.liveNodes(5_500, 10_000)).toEqual(['a']);
  });

  it('change feed: a change reaches every node, and one made in a rolled-back transaction reaches none', async () => {
    const db = await open();
    const other = test.reopen();
    const here = new ChangeFeed(db, 'node-1');
    const there = new ChangeFeed(other, 'node-2');
    await here.start();
    await there.start();
    const seen: Change[] = [];
    // SQLite is one node: its listeners are on the publishing feed itself.
    const listening = backend === 'postgres' ? there : here;
    const arrived = new Promise<void>((resolve) =>
      listening.subscribe((change) => {
        seen.push(change);
        if (change.key === 'second') resolve();
      }),
    );
    await db
      .transaction(async (tx) => {
        await here.publish('worker_deployments', 'rolled-back', tx);
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await db.transaction(async (tx) => here.publish('worker_deployments', 'first', tx));
    await here.publish('r2_buckets', 'second');
    await arrived;
    if (backend === 'postgres') {
      expect(seen).toEqual([
        { topic: 'worker_deployments', key: 'first', origin: 'node-1' },
        { topic: 'r2_buckets', key: 'second', origin: 'node-1' },
      ]);
    } else {
      // Called at once, before the outcome of the transaction is known (listeners re-read committed state).
      expect(seen.map((change) => change.key)).toEqual(['rolled-back', 'first', 'second']);
    }
    await here.stop();
    await there.stop();
  });
});

describe('shard ownership (rendezvous hashing)', () => {
  const origins = Array.from({ length: 3_000 }, (_, i) => `pool-${i % 50}/origin-${i}`);

  it('spreads keys evenly and agrees on every node', () => {
    const counts = new Map<string, number>();
    for (const key of origins) {
      const owner = shardOwner(key, ['n1', 'n2', 'n3'])!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
      expect(shardOwner(key, ['n3', 'n1', 'n2'])).toBe(owner);
    }
    for (const count of counts.values()) expect(count).toBeGreaterThan(800);
    expect(shardOwner('x', [])).toBeUndefined();
  });

  it('moves only the dead node’s keys when it leaves', () => {
    let moved = 0;
    for (const key of origins) {
      const before = shardOwner(key, ['n1', 'n2', 'n3'])!;
      const after = shardOwner(key, ['n1', 'n3'])!;
      if (before !== 'n2') expect(after).toBe(before);
      else moved++;
    }
    expect(moved).toBeGreaterThan(800);
  });
});
