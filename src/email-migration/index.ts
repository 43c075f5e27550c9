export { MigrationApi, type PoolSummary, type AlertPolicy } from './api.ts';
export { migrate, type MigrateOptions, type MigrationReport } from './migrate.ts';
export { migrationStatus, type MigrationStatus, type PoolStatus } from './status.ts';
export { markerFor, groupByAddresses } from './policies.ts';
export { parseAddresses } from './addresses.ts';
