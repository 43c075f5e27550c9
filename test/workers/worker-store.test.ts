import { describe } from 'vitest';
import { accountMigrations, SqlAccountStore } from '../../src/accounts/index.ts';
import { applyMigrations } from '../../src/db/index.ts';
import { SecretBox } from '../../src/shared/crypto.ts';
import { newId } from '../../src/shared/ids.ts';
import { SqlWorkerStore, workerMigrations } from '../../src/workers/index.ts';
import { BACKENDS, openTestDatabase } from '../helpers/backends.ts';
import { workerStoreConformance } from './conformance/worker-store.ts';
import { systemClock } from '../../src/shared/clock.ts';

describe.each(BACKENDS)('%s', (backend) => {
  workerStoreConformance(backend, async () => {
    const test = await openTestDatabase(backend);
    await applyMigrations(test.db, [...accountMigrations, ...workerMigrations], systemClock);
    const accounts = new SqlAccountStore(test.db, systemClock);
    const ids: [string, string] = [newId(), newId()];
    for (const id of ids) {
      await accounts.insertAccount({ id, name: id, type: 'standard', created_on: new Date().toISOString() });
    }
    const box = new SecretBox(SecretBox.generateKey());
    return {
      store: new SqlWorkerStore(test.db, box, systemClock),
      secondStore: new SqlWorkerStore(test.reopen(), box, systemClock),
      accounts: ids,
      close: () => test.close(),
    };
  });
});
