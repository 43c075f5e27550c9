export { tlsMigrations } from './migrations.ts';
export { createTlsSubsystem, type TlsSubsystem, type TlsSettings } from './subsystem.ts';
export type { ServedHostname } from './acme/manager.ts';
