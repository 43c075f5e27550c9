import type { AccountService } from '../accounts/index.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import type { Logger } from '../shared/logger.ts';
import type { R2ServiceResolver } from './runtime/config.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import { CronService } from './crons/cron-service.ts';
import { CronStore } from './crons/cron-store.ts';
import { FunctionMetricsCollector } from './runtime/function-metrics.ts';
import { FunctionLogHub } from './runtime/log-hub.ts';
import { FunctionsRuntime, type FunctionsConfig } from './runtime/supervisor.ts';
import { WorkersService, type BucketLookup } from './service.ts';
import { SqlWorkerStore } from './store.ts';

export interface FunctionsPlatform {
  workers: WorkersService;
  runtime: FunctionsRuntime;
  logs: FunctionLogHub;
  /** Cron Triggers: schedules, their runs and the scheduler (a BackgroundService). */
  crons: CronService;
}

/** Composes the functions subsystem; nothing starts until `runtime.start()` (a BackgroundService). */
export function createFunctions(deps: {
  config: FunctionsConfig;
  db: SqlDatabase;
  secretBox: SecretBox;
  accounts: AccountService;
  logger: Logger;
  paths: { runtime: string; logs: string };
  buckets: BucketLookup;
  r2: R2ServiceResolver;
  metrics?: LedgeMetrics | undefined;
}): FunctionsPlatform {
  const logs = new FunctionLogHub(deps.paths.logs);
  const runtime = new FunctionsRuntime({
    config: deps.config,
    runtimeDir: deps.paths.runtime,
    logger: deps.logger.child({ subsystem: 'functions' }),
    logs,
    r2: deps.r2,
    deployed: () => workers.deployedScripts(),
    metrics: deps.metrics,
  });
  if (deps.metrics) {
    const collector = new FunctionMetricsCollector(deps.metrics, () => runtime.pingSockets());
    deps.metrics.registry.onCollect(() => collector.collect());
  }
  const workers: WorkersService = new WorkersService({
    store: new SqlWorkerStore(deps.db, deps.secretBox),
    runtime,
    buckets: deps.buckets,
    accounts: deps.accounts,
  });
  const crons = new CronService({
    store: new CronStore(deps.db),
    requireScript: (accountId, name) => workers.requireScript(accountId, name),
    runtime,
    logs,
    logger: deps.logger.child({ subsystem: 'crons' }),
    metrics: deps.metrics,
  });
  return { workers, runtime, logs, crons };
}
