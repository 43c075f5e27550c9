export { loadBalancingMigrations } from './migrations.ts';
export { LoadBalancing, loadBalancingSettings, type LoadBalancingSettings } from './service.ts';
export { loadBalancingRoutes } from './routes.ts';
export { LbErrors } from './errors.ts';
export type { Pool, Origin } from './pool-schemas.ts';
export type { Monitor } from './monitor-schemas.ts';
export type { Reference, ReferenceSource } from './references.ts';
export {
  HealthEventBus,
  type HealthEvent,
  type HealthEventListener,
  type Health,
  type EventSource,
} from './health/events.ts';
export { PoolEnablementBus, type PoolEnablementEvent } from './pool-events.ts';
export type { CheckerStats } from './health/checker.ts';
export { createLoadBalancingSubsystem, type LoadBalancingSubsystem } from './subsystem.ts';
