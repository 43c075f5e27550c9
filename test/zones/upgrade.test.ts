import { describe, expect, it } from 'vitest';
import { applyMigrations, SqliteDatabase } from '../../src/db/index.ts';
import { dataPaths, ensureDataDir } from '../../src/server/data-dir.ts';
import { allMigrations } from '../../src/server/migrations.ts';
import { startLedge, tempDir } from '../helpers/ledge.ts';
import { poolBody } from '../load-balancing/helpers.ts';
import { apiClient } from './helpers.ts';
import { systemClock } from '../../src/shared/clock.ts';

const NEW = ['zones/0001_initial', 'load-balancing/0002_load_balancers'];

describe('zones and load balancers on an existing data dir', () => {
  it('migrates a data dir made before them, and keeps zones and load balancers across restarts', async () => {
    const dataDir = tempDir();
    ensureDataDir(dataDir);
    const before = new SqliteDatabase(dataPaths(dataDir).database);
    await applyMigrations(
      before,
      allMigrations.filter((m) => !NEW.includes(m.id)),
      systemClock,
    );
    await before.close();

    let ledge = await startLedge({ dataDir });
    let call = apiClient(ledge);
    const applied = (await ledge.server.platform.db.all<{ id: string }>('SELECT id FROM schema_migrations')).map(
      (r) => r.id,
    );
    expect(applied).toEqual(expect.arrayContaining(NEW));
    const zone = (await call('POST', '/zones', { name: 'kept.example', account: { id: ledge.accountId } })).body.result;
    const pool = (await call('POST', `/accounts/${ledge.accountId}/load_balancers/pools`, poolBody('kept'))).body
      .result;
    const lb = (
      await call('POST', `/zones/${zone.id}/load_balancers`, {
        name: 'kept.example',
        default_pools: [pool.id],
        fallback_pool: pool.id,
      })
    ).body.result;
    await ledge.close();

    ledge = await startLedge({ dataDir });
    call = apiClient(ledge);
    try {
      expect((await call('GET', `/zones/${zone.id}`)).body.result.name).toBe('kept.example');
      expect((await call('GET', `/zones/${zone.id}/load_balancers/${lb.id}`)).body.result).toEqual(lb);
      expect(
        (await ledge.server.platform.loadBalancing.directory.findByHostname('kept.example'))?.loadBalancer.id,
      ).toBe(lb.id);
    } finally {
      await ledge.close();
    }
  });
});
