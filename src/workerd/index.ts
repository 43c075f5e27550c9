/**
 * The function runtime: workerd processes supervised for the functions product (workers/), the configs
 * generated for them, and the modules that run inside them. The product hands it the scripts to run
 * (ScriptToRun) and an R2 service resolver; it serves them on the functions port and reports back logs,
 * traces, metrics and which scripts failed to start.
 */
export { FunctionsRuntime, type FunctionsConfig, type RuntimeDeps } from './supervisor.ts';
export type { LocalReads, R2ServiceResolver, WorkerdR2Service } from './config/index.ts';
export {
  DEFAULT_CPU_MS,
  ModuleTypes,
  routedScriptKey,
  type Binding,
  type DurableObjectClass,
  type RemoteObjectClass,
  type ModuleType,
  type ReloadReport,
  type ScriptRuntimeStatus,
  type ScriptToRun,
  type WorkerModule,
} from './script.ts';
export { FunctionLogHub, type FunctionLogLine } from './log-hub.ts';
export { TailTraces, type TailEvent, type TailRequestEvent } from './tail-traces.ts';
export type { ScheduledOutcome } from './scheduled-call.ts';
export { FunctionMetricsCollector, type FunctionGrowth } from './function-metrics.ts';
export { invalidateEverywhere } from './r2-invalidation.ts';
export { WorkerdProcess } from './workerd-process.ts';
export { MissingDurableObjectClassError } from './missing-class.ts';
export { DEFAULT_SUBREQUESTS_PER_INVOCATION } from './limits.ts';
export { RESERVED_BINDING_PREFIX, ROUTED_SCRIPT_HEADER, TAIL_FLAG_TTL_MS } from './isolate/contract.ts';
export { EngineHost, type EngineHostDeps, type EnginesClusterSettings } from './engine-host.ts';
export type { EngineSockets } from './config/bindings/contract.ts';
export { queuesEngine, QUEUE_HEADER, type EngineConsumer } from './config/engines/queues.ts';
export { QUEUE_RELAY_ENTRYPOINT } from './config/queue-relay.ts';
export {
  D1_DATABASE_HEADER,
  engineKinds,
  KV_NAMESPACE_HEADER,
  type EngineKind,
  type EngineSettings,
} from './config/engines/index.ts';
