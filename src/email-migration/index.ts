export { MigrationApi, type PoolSummary, type AlertPolicy } from './api.ts';
export type { MigrationReport } from '../client/index.ts';
export { migrate, type MigrateOptions } from './migrate.ts';
export { migrationStatus, type MigrationStatus, type PoolStatus } from './status.ts';
export { markerFor, groupByAddresses } from './policies.ts';
export { parseAddresses } from './addresses.ts';
