export { workerRouteMigrations } from './migrations.ts';
export { createWorkerRoutesSubsystem, type WorkerRoutesSubsystem } from './subsystem.ts';
export { WorkerRouteTable, type WorkerRouteTarget, type RouteEntry, type DomainEntry } from './table.ts';
export { parseRoutePattern, compareSpecificity, type RoutePattern } from './pattern.ts';
export type { WorkerRouteDirectory } from './directory.ts';
