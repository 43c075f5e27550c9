import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/index.ts';
import { d1Migrations, SqlD1Store } from '../../src/d1/index.ts';
import { BACKENDS, type TestDatabase } from '../helpers/backends.ts';
import { ACCOUNT, OTHER_ACCOUNT, openStoreDatabase } from '../helpers/store-database.ts';
import { systemClock } from '../../src/shared/clock.ts';

describe.each(BACKENDS)('D1 database records on %s', (backend) => {
  let test: TestDatabase;
  beforeEach(async () => {
    test = await openStoreDatabase(backend);
    await applyMigrations(test.db, d1Migrations, systemClock);
  });
  afterEach(async () => test.close());

  it('names each account that has databases once, however many it has', async () => {
    const store = new SqlD1Store(test.db);
    expect(await store.accounts()).toEqual([]);
    const record = (uuid: string, account_id: string, name: string) => ({
      uuid,
      account_id,
      name,
      jurisdiction: null,
      primary_location_hint: null,
      created_at: '2026-01-01T00:00:00.000Z',
    });
    await store.insert(record('00000000-0000-4000-8000-000000000001', ACCOUNT, 'one'));
    await store.insert(record('00000000-0000-4000-8000-000000000002', ACCOUNT, 'two'));
    await store.insert(record('00000000-0000-4000-8000-000000000003', OTHER_ACCOUNT, 'one'));
    expect((await store.accounts()).toSorted()).toEqual([ACCOUNT, OTHER_ACCOUNT]);
  });
});
