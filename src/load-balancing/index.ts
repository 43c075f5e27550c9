export { loadBalancingMigrations } from './migrations.ts';
export { LoadBalancing, type LoadBalancingSettings } from './service.ts';
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
export { createLoadBalancingSubsystem, type LoadBalancingDeps, type LoadBalancingSubsystem } from './subsystem.ts';
export { loadBalancerRoutes, type ZoneResolver } from './load-balancers/routes.ts';
export {
  LoadBalancerDirectory,
  type LoadBalancerRoute,
  type RoutePool,
  type PoolHealthState,
} from './load-balancers/directory.ts';
export type { ConfigChange, ConfigChangeListener } from './load-balancers/changes.ts';
export type { HostnameZoneLookup, LoadBalancerZone, ReservedHostnames } from './load-balancers/service.ts';
export type { LoadBalancer, SteeringPolicy } from './load-balancers/schemas.ts';
export { APPLIED_STEERING_POLICIES, STEERING_POLICIES } from './load-balancers/schemas.ts';
