import { describe } from 'vitest';
import { accountMigrations, SqlAccountStore } from '../../src/accounts/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { BACKENDS, openTestDatabase } from '../helpers/backends.ts';
import { accountStoreConformance } from './conformance/account-store.ts';
import { systemClock } from '../../src/shared/clock.ts';

describe.each(BACKENDS)('%s', (backend) => {
  accountStoreConformance(backend, async () => {
    const test = await openTestDatabase(backend);
    await applyMigrations(test.db, accountMigrations, systemClock);
    return {
      store: new SqlAccountStore(test.db, systemClock),
      secondStore: new SqlAccountStore(test.reopen(), systemClock),
      close: () => test.close(),
    };
  });
});
