export { workerMigrations } from './migrations.ts';
export { workerRoutes } from './routes.ts';
export { WORKER_LIMITS } from './limits.ts';
export { WorkersService, type BucketLookup, type DatabaseLookup, type FunctionRuntime } from './service.ts';
export { SqlWorkerStore, type WorkerStore } from './store.ts';
export {
  FunctionLogHub,
  FunctionsRuntime,
  ROUTED_SCRIPT_HEADER,
  routedScriptKey,
  type R2ServiceResolver,
} from '../workerd/index.ts';
export {
  createWorkersSubsystem,
  type FunctionsPlatform,
  type WorkersSettings,
  type WorkersSubsystem,
} from './subsystem.ts';
export { ClusterObjects } from './durable-objects/cluster-objects.ts';
