import { describe } from 'vitest';
import { accountMigrations, SqlAccountStore } from '../../src/accounts/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { SecretBox } from '../../src/shared/crypto.ts';
import { newId } from '../../src/shared/ids.ts';
import { SqlWorkerStore, workerMigrations } from '../../src/workers/index.ts';
import { BACKENDS, openTestDatabase } from '../helpers/backends.ts';
import { cronStoreConformance } from './conformance/cron-store.ts';
import { systemClock } from '../../src/shared/clock.ts';

/** The Cron Trigger store's conformance suite, on every backend of the persistence contract. */
describe.each(BACKENDS)('CronStore on %s', (backend) => {
  cronStoreConformance(async () => {
    const test = await openTestDatabase(backend);
    await applyMigrations(test.db, [...accountMigrations, ...workerMigrations], systemClock);
    const accounts = new SqlAccountStore(test.db, systemClock);
    const ids: [string, string] = [newId(), newId()];
    for (const id of ids)
      await accounts.insertAccount({ id, name: id, type: 'standard', created_on: new Date().toISOString() });
    return {
      db: test.db,
      second: test.reopen(),
      workers: new SqlWorkerStore(test.db, new SecretBox(SecretBox.generateKey()), systemClock),
      accounts: ids,
      close: () => test.close(),
    };
  });
});
