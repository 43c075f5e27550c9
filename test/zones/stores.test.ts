import { afterEach, beforeEach, describe } from 'vitest';
import { BACKENDS, type TestDatabase } from '../helpers/backends.ts';
import { openStoreDatabase } from '../helpers/store-database.ts';
import { zoneStoreCases } from './conformance/zone-store.ts';

/** The zone store's conformance suite, on every backend of the persistence contract. */
describe.each(BACKENDS)('zone store on %s', (backend) => {
  let test: TestDatabase;
  beforeEach(async () => {
    test = await openStoreDatabase(backend);
  });
  afterEach(async () => test.close());

  describe('ZoneStore', () => zoneStoreCases(backend, { db: () => test.db, reopen: () => test.reopen() }));
});
