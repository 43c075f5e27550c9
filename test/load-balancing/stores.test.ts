import { afterEach, beforeEach, describe } from 'vitest';
import { BACKENDS, type TestDatabase } from '../helpers/backends.ts';
import { openStoreDatabase } from '../helpers/store-database.ts';
import type { StoreContext } from './conformance/fixtures.ts';
import { healthStoreCases } from './conformance/health-store.ts';
import { loadBalancerStoreCases } from './conformance/load-balancer-store.ts';
import { monitorStoreCases } from './conformance/monitor-store.ts';
import { poolStoreCases } from './conformance/pool-store.ts';
import { previewStoreCases } from './conformance/preview-store.ts';

/** The load-balancing stores' conformance suites, on every backend of the persistence contract. */
describe.each(BACKENDS)('load-balancing stores on %s', (backend) => {
  let test: TestDatabase;
  beforeEach(async () => {
    test = await openStoreDatabase(backend);
  });
  afterEach(async () => test.close());
  const context: StoreContext = { db: () => test.db, reopen: () => test.reopen() };

  describe('PoolStore', () => poolStoreCases(backend, context));
  describe('MonitorStore', () => monitorStoreCases(backend, context));
  describe('HealthStore', () => healthStoreCases(backend, context));
  describe('LoadBalancerStore', () => loadBalancerStoreCases(backend, context));
  describe('PreviewStore', () => previewStoreCases(backend, context));
});
