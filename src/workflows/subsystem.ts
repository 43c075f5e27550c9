import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import { workflowRoutes } from './routes.ts';
import { WorkflowService, type WorkflowRuntime } from './service.ts';
import { SqlWorkflowStore } from './store.ts';

export interface WorkflowsSubsystem extends Subsystem {
  service: WorkflowService;
  store: SqlWorkflowStore;
}

/** Workflows: records and the v4 API here, instances in the engine beside the Worker that runs each. */
export function createWorkflowsSubsystem(deps: {
  db: SqlDatabase;
  runtime: WorkflowRuntime;
  scriptExists: (accountId: string, script: string) => Promise<boolean>;
  clock: Clock;
}): WorkflowsSubsystem {
  const store = new SqlWorkflowStore(deps.db);
  const service = new WorkflowService({
    store,
    runtime: deps.runtime,
    scriptExists: deps.scriptExists,
    clock: deps.clock,
  });
  return {
    name: 'workflows',
    service,
    store,
    background: [],
    mountRoutes: (api) => {
      api.route('/', workflowRoutes(service));
    },
  };
}
