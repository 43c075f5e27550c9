import type { Subsystem } from '../api/subsystem.ts';
import { workerRoutes } from './routes.ts';
import { scriptUploadLimit } from './limits.ts';
import { createFunctions, type FunctionsPlatform } from './wiring.ts';

export interface WorkersSubsystem extends Subsystem {
  functions: FunctionsPlatform;
}

/** Scripts, deployments, secrets and the workerd supervisor (its background service). */
export function createWorkersSubsystem(
  deps: Parameters<typeof createFunctions>[0] & { env: NodeJS.ProcessEnv },
): WorkersSubsystem {
  const functions = createFunctions(deps);
  const uploadLimit = scriptUploadLimit(deps.env);
  return {
    name: 'workers',
    functions,
    // Started after the R2 wire backend (bindings reach it) and stopped before it: see platform.ts.
    // Cron Triggers run scheduled() handlers in the runtime: started after it, stopped before it.
    // Kept log lines are written last, once the runtime that prints them has stopped.
    background: [
      functions.logs,
      ...(functions.logHistory ? [functions.logHistory] : []),
      functions.runtime,
      // Stopped before the runtime, so its last scrape still finds the processes.
      functions.requestHistory,
      functions.crons,
    ],
    mountRoutes: (api) =>
      api.route(
        '/',
        workerRoutes(functions.workers, functions.logs, {
          uploadLimit,
          crons: functions.crons,
          tails: functions.tails,
          requestHistory: functions.requestHistory,
        }),
      ),
  };
}
