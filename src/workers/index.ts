export { workerMigrations } from './migrations.ts';
export { workerRoutes } from './routes.ts';
export { scriptUploadLimit, WORKER_LIMITS } from './limits.ts';
export { WorkersService, type BucketLookup, type FunctionRuntime } from './service.ts';
export { SqlWorkerStore, type WorkerStore } from './store.ts';
export { FunctionLogHub, FunctionsRuntime, type R2ServiceResolver } from '../workerd/index.ts';
export type { FunctionsPlatform } from './wiring.ts';
export { createWorkersSubsystem, type WorkersSubsystem } from './subsystem.ts';
