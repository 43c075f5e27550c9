import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cluster, clusterMigrations } from '../../src/cluster/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { systemClock } from '../../src/shared/clock.ts';

const logger = createLogger('error', systemClock);
const origins = Array.from({ length: 300 }, (_, i) => `pool-${i % 10}/origin-${i}`);

/** What every node of a cluster gets from `Cluster`: its share of the origins, leases, other nodes' changes. */
describe('Cluster: nodes on one PostgreSQL database', () => {
  let test: TestDatabase;
  const clusters: Cluster[] = [];
  const node = async (nodeId: string) => {
    const cluster = new Cluster({
      db: clusters.length === 0 ? test.db : test.reopen(),
      nodeId,
      logger,
      heartbeatMs: 200,
      clock: systemClock,
    });
    clusters.push(cluster);
    await cluster.background.start();
    return cluster;
  };
  afterEach(async () => {
    for (const cluster of clusters.splice(0)) await cluster.background.stop();
    await test?.close();
  });

  it('splits the origins between live nodes, and the survivor takes a stopped node’s share', async () => {
    test = await openTestDatabase('postgres');
    await applyMigrations(test.db, clusterMigrations, systemClock);
    const a = await node('node-a');
    const b = await node('node-b');
    await vi.waitFor(
      () =>
        expect([a.liveNodes, b.liveNodes]).toEqual([
          ['node-a', 'node-b'],
          ['node-a', 'node-b'],
        ]),
      {
        timeout: 30_000,
      },
    );
    const ownedByA = origins.filter((key) => a.owns(key));
    const ownedByB = origins.filter((key) => b.owns(key));
    expect(ownedByA.length + ownedByB.length).toBe(origins.length); // each origin has exactly one owner
    expect(ownedByA.filter((key) => ownedByB.includes(key))).toEqual([]);
    expect(ownedByA.length).toBeGreaterThan(100);

    const moved = vi.fn();
    a.onLiveChange(moved);
    await b.background.stop();
    clusters.splice(clusters.indexOf(b), 1);
    await vi.waitFor(() => expect(a.liveNodes).toEqual(['node-a']), { timeout: 30_000 });
    expect(moved).toHaveBeenCalled();
    expect(origins.every((key) => a.owns(key))).toBe(true);
  });

  it('gives a job to one node at a time, and announces changes to the others only', async () => {
    test = await openTestDatabase('postgres');
    await applyMigrations(test.db, clusterMigrations, systemClock);
    const a = await node('node-a');
    const b = await node('node-b');
    expect(await a.mayRun('r2-sweep', 60_000)).toBe(true);
    expect(await b.mayRun('r2-sweep', 60_000)).toBe(false);
    expect(await a.mayRun('r2-sweep', 60_000)).toBe(true); // renewed by its holder

    const heardByA = vi.fn();
    const heardByB = vi.fn();
    a.onRemote('r2_buckets', heardByA);
    b.onRemote('r2_buckets', heardByB);
    a.announce('r2_buckets', 'account/bucket');
    await vi.waitFor(() => expect(heardByB).toHaveBeenCalledWith('account/bucket'), { timeout: 30_000 });
    expect(heardByA).not.toHaveBeenCalled();

    // A node that stops gives its jobs up: the other takes them at once, not when the lease runs out.
    await a.background.stop();
    clusters.splice(clusters.indexOf(a), 1);
    expect(await b.mayRun('r2-sweep', 60_000)).toBe(true);
  });

  it('is the only node on SQLite: owns everything, runs every job, costs no query', async () => {
    test = await openTestDatabase('sqlite');
    const only = await node('solo');
    expect(only.shared).toBe(false);
    expect(origins.every((key) => only.owns(key))).toBe(true);
    expect(await only.mayRun('anything', 1)).toBe(true);
    expect(only.liveNodes).toEqual(['solo']);
  });
});
