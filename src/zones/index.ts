export { zoneMigrations } from './migrations.ts';
export { ZoneService, type ZoneRef, type ZoneDeletionHook } from './service.ts';
export { SqliteZoneStore, type ZoneStore } from './store.ts';
export { zoneRoutes } from './routes.ts';
export { ZoneErrors } from './errors.ts';
export { normaliseHostname, type Zone } from './schemas.ts';
