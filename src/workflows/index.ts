export { workflowMigrations } from './migrations.ts';
export { createWorkflowsSubsystem, type WorkflowsSubsystem } from './subsystem.ts';
export { WorkflowService, type WorkflowRuntime } from './service.ts';
export type { WorkflowRecord } from './schemas.ts';
