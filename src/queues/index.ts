export { queuesMigrations } from './migrations.ts';
export { createQueuesSubsystem, type QueuesSubsystem } from './subsystem.ts';
export { QueueService, DEFAULT_QUEUE_LIMITS, type QueueLimits } from './service.ts';
export { QueueErrors } from './errors.ts';
export type { QueueRecord, ConsumerRecord, QueueMetrics } from './schemas.ts';
