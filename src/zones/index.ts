export { zoneMigrations } from './migrations.ts';
export { ZoneService, type ZoneRef, type ZoneDeletionHook } from './service.ts';
export { SqlZoneStore, type ZoneStore } from './store.ts';
export { createZonesSubsystem, type ZonesSubsystem } from './subsystem.ts';
export { zoneRoutes } from './routes.ts';
export { ZoneErrors } from './errors.ts';
export { normaliseHostname, type Zone } from './schemas.ts';
