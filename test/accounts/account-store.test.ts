import { describe } from 'vitest';
import { accountMigrations, SqlAccountStore } from '../../src/accounts/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { BACKENDS, openTestDatabase } from '../helpers/backends.ts';
import { accountStoreConformance } from './conformance/account-store.ts';

describe.each(BACKENDS)('%s', (backend) => {
  accountStoreConformance(backend, async () => {
    const test = await openTestDatabase(backend);
    await applyMigrations(test.db, accountMigrations);
    return {
      store: new SqlAccountStore(test.db),
      secondStore: new SqlAccountStore(test.reopen()),
      close: () => test.close(),
    };
  });
});
