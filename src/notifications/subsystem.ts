import type { Subsystem } from '../api/subsystem.ts';
import type { HealthEventBus, PoolEnablementBus } from '../load-balancing/index.ts';
import { notificationRoutes } from './routes.ts';
import { NotificationService, type NotificationOptions } from './service.ts';

export interface NotificationsSubsystem extends Subsystem {
  service: NotificationService;
}

/**
 * Alert policies, destinations, the outbox and its dispatcher. It subscribes to the health and pool
 * enablement events here, before anything runs, so no event is recorded without its deliveries.
 */
export function createNotificationsSubsystem(
  deps: NotificationOptions & { healthEvents: HealthEventBus; poolEnablement: PoolEnablementBus },
): NotificationsSubsystem {
  const service = new NotificationService(deps);
  service.subscribeTo(deps.healthEvents, deps.poolEnablement);
  return {
    name: 'notifications',
    service,
    background: [service.dispatcher, service.retention],
    mountRoutes: (api) => api.route('/', notificationRoutes(service)),
  };
}
