export {
  ApiClient,
  ApiError,
  parseEnvelope,
  readEnvelope,
  type Auth,
  type ClientSettings,
  type ApiResponse,
  type Query,
} from './api-client.ts';
export { getUser, listAccounts, verifyToken, type AccountSummary } from './accounts.ts';
export {
  bulkEditPools,
  createMonitor,
  createPool,
  deleteMonitor,
  deletePool,
  getMonitor,
  getPool,
  getPoolHealth,
  listMonitors,
  listPools,
  updateMonitor,
  updatePool,
} from './load-balancing.ts';
export {
  createPolicy,
  createWebhook,
  deletePolicy,
  deleteWebhook,
  getPolicy,
  listHistory,
  listPolicies,
  listWebhooks,
  updatePolicy,
  type NotificationPolicyInput,
} from './notifications.ts';
export {
  createBucket,
  deleteBucket,
  deleteObject,
  getBucket,
  getLifecycleRules,
  getObject,
  listBuckets,
  listObjectPage,
  listObjects,
  putLifecycleRules,
  putObject,
  type LifecycleConditionSummary,
  type LifecycleRuleSummary,
  type ObjectPage,
  type ObjectSummary,
} from './r2.ts';
export {
  getAccountSubdomain,
  getSchedules,
  listCronRuns,
  listScriptStates,
  putSchedules,
  triggerCron,
  type CronRun,
  type CronSchedule,
  type ScriptRuntimeState,
} from './workers.ts';
export {
  deleteSecret,
  deleteWorker,
  listSecrets,
  putSecret,
  setScriptSubdomain,
  tailScript,
  uploadScript,
  type FunctionLogLine,
  type ScriptModule,
  type ScriptSubdomain,
  type ScriptUploadInput,
  type UploadedScript,
} from './workers.ts';
export {
  getScriptAssets,
  getScriptSettings,
  getScriptSubdomain,
  listDeployments,
  listScripts,
  type AssetSummary,
} from './scripts.ts';
export { createZone, deleteZone, findZone, getZone, listZones } from './zones.ts';
export { listWorkerDomains, listZoneRoutes, type WorkerDomain, type WorkerRoute } from './worker-routes.ts';
export {
  createLoadBalancer,
  deleteLoadBalancer,
  getLoadBalancer,
  getPoolReferences,
  listLoadBalancers,
  updateLoadBalancer,
} from './load-balancers.ts';
export {
  openTailSession,
  type TailEventMessage,
  type TailSessionFilter,
  type TailSessionHandle,
} from './tail-session.ts';
export { createSilences, deleteSilence, listSilences, updateSilences, type AlertSilence } from './silences.ts';
export { abortUpload, completeUpload, createUpload, openObject, putObjectBytes, uploadPart } from './r2-uploads.ts';
export type {
  ApiToken,
  Bucket,
  BucketCors,
  BucketLifecycle,
  CorsRule,
  Deployment,
  LifecycleRule,
  LoadBalancer,
  Member,
  Membership,
  Monitor,
  NotificationHistoryItem,
  NotificationPolicy,
  Origin,
  OriginHealth,
  Pool,
  PoolHealth,
  PoolReference,
  Role,
  Script,
  ScriptBinding,
  ScriptSettings,
  SecretSummary,
  Sent,
  UploadedObject,
  WebhookDestination,
  Zone,
} from './wire.ts';
export {
  addCustomDomain,
  getManagedDomain,
  listCustomDomains,
  removeCustomDomain,
  setManagedDomain,
  type CustomDomainSummary,
  type ManagedDomainSummary,
} from './r2-domains.ts';
export type { MigrationPolicyChange, MigrationReport } from './email-migration.ts';
