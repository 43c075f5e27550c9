import { afterEach, beforeEach, describe } from 'vitest';
import type { TestDatabase } from '../helpers/backends.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { openStoreDatabase } from '../helpers/store-database.ts';
import type { StoreContext } from './conformance/context.ts';
import { deliveryHistoryCases } from './conformance/delivery-history.ts';
import { notificationStoreCases } from './conformance/notification-store.ts';
import { outboxCases } from './conformance/outbox.ts';
import { silenceStoreCases } from './conformance/silence-store.ts';

/** The notification stores' conformance suites, on every backend of the persistence contract. */
describe.each(BACKENDS)('notification stores on %s', (backend) => {
  let test: TestDatabase;
  beforeEach(async () => {
    test = await openStoreDatabase(backend);
  });
  afterEach(async () => test.close());
  const context: StoreContext = { db: () => test.db, reopen: () => test.reopen() };

  describe('NotificationStore and AlertStateStore', () => notificationStoreCases(backend, context));
  describe('Outbox', () => outboxCases(backend, context));
  describe('DeliveryHistory', () => deliveryHistoryCases(backend, context));
  describe('SilenceStore', () => silenceStoreCases(context));
});
