import type { SdkType } from './schemas.ts';

/**
 * Issue 13, point 6: the SDK response type of every /client/v4 route, written out by hand from the SDK's
 * resource classes (node_modules/cloudflare/resources). The `result` of a Ledge answer must validate against
 * it. List methods that return `PagePromise<SinglePage<T>>` (and the other array paginations) answer
 * `result: T[]`; `V4PagePagination<T>` answers `result: { items: T[] }`.
 */
export const SDK_TYPES = {
  User: { module: 'user/user', type: '$.UserGetResponse' },
  UserEdit: { module: 'user/user', type: '$.UserEditResponse' },
  TokenVerify: { module: 'user/tokens/tokens', type: '$.TokenVerifyResponse' },
  AccountList: { module: 'accounts/accounts', type: 'Array<$.Account>' },
  Account: { module: 'accounts/accounts', type: '$.Account' },
  MembershipList: { module: 'memberships/memberships', type: 'Array<$.Membership>' },
  MembershipGet: { module: 'memberships/memberships', type: '$.MembershipGetResponse' },
  MembershipUpdate: { module: 'memberships/memberships', type: '$.MembershipUpdateResponse' },
  MembershipDelete: { module: 'memberships/memberships', type: '$.MembershipDeleteResponse' },

  ZoneList: { module: 'zones/zones', type: 'Array<$.Zone>' },
  Zone: { module: 'zones/zones', type: '$.Zone' },
  ZoneDelete: { module: 'zones/zones', type: '$.ZoneDeleteResponse' },
  LoadBalancerList: { module: 'load-balancers/load-balancers', type: 'Array<$.LoadBalancer>' },
  LoadBalancer: { module: 'load-balancers/load-balancers', type: '$.LoadBalancer' },
  LoadBalancerDelete: { module: 'load-balancers/load-balancers', type: '$.LoadBalancerDeleteResponse' },

  PoolList: { module: 'load-balancers/pools/pools', type: 'Array<$.Pool>' },
  Pool: { module: 'load-balancers/pools/pools', type: '$.Pool' },
  PoolDelete: { module: 'load-balancers/pools/pools', type: '$.PoolDeleteResponse' },
  PoolHealth: { module: 'load-balancers/pools/health', type: '$.HealthGetResponse' },
  PoolPreview: { module: 'load-balancers/pools/health', type: '$.HealthCreateResponse' },
  PoolReferences: { module: 'load-balancers/pools/references', type: 'Array<$.ReferenceGetResponse>' },
  PreviewResult: { module: 'load-balancers/previews', type: '$.PreviewGetResponse' },
  MonitorList: { module: 'load-balancers/monitors/monitors', type: 'Array<$.Monitor>' },
  Monitor: { module: 'load-balancers/monitors/monitors', type: '$.Monitor' },
  MonitorDelete: { module: 'load-balancers/monitors/monitors', type: '$.MonitorDeleteResponse' },
  MonitorReferences: { module: 'load-balancers/monitors/references', type: 'Array<$.ReferenceGetResponse>' },
  MonitorPreview: { module: 'load-balancers/monitors/previews', type: '$.PreviewCreateResponse' },

  AvailableAlerts: { module: 'alerting/available-alerts', type: '$.AvailableAlertListResponse' },
  Eligible: { module: 'alerting/destinations/eligible', type: '$.EligibleGetResponse' },
  PolicyList: { module: 'alerting/policies', type: 'Array<$.Policy>' },
  Policy: { module: 'alerting/policies', type: '$.Policy' },
  PolicyCreate: { module: 'alerting/policies', type: '$.PolicyCreateResponse' },
  PolicyUpdate: { module: 'alerting/policies', type: '$.PolicyUpdateResponse' },
  PolicyDelete: { module: 'alerting/policies', type: '$.PolicyDeleteResponse', wholeBody: true },
  // `Webhooks` is both the resource class and the destination interface: the interface is copied out.
  WebhookList: { module: 'alerting/destinations/webhooks', type: 'Array<$.Webhooks>', copyInterface: 'Webhooks' },
  Webhook: { module: 'alerting/destinations/webhooks', type: '$.Webhooks', copyInterface: 'Webhooks' },
  WebhookCreate: { module: 'alerting/destinations/webhooks', type: '$.WebhookCreateResponse' },
  WebhookUpdate: { module: 'alerting/destinations/webhooks', type: '$.WebhookUpdateResponse' },
  WebhookDelete: { module: 'alerting/destinations/webhooks', type: '$.WebhookDeleteResponse', wholeBody: true },
  History: { module: 'alerting/history', type: 'Array<$.History>' },

  TailCreate: { module: 'workers/scripts/tail', type: '$.TailCreateResponse' },
  ScriptList: { module: 'workers/scripts/scripts', type: 'Array<$.ScriptListResponse>' },
  ScheduleUpdate: { module: 'workers/scripts/schedules', type: '$.ScheduleUpdateResponse' },
  ScheduleGet: { module: 'workers/scripts/schedules', type: '$.ScheduleGetResponse' },
  ScriptUpdate: { module: 'workers/scripts/scripts', type: '$.ScriptUpdateResponse' },
  Worker: { module: 'workers/beta/workers/workers', type: '$.Worker' },
  VersionCreate: { module: 'workers/scripts/versions', type: '$.VersionCreateResponse' },
  VersionList: { module: 'workers/scripts/versions', type: '{ items?: Array<$.VersionListResponse> }' },
  Version: { module: 'workers/scripts/versions', type: '$.VersionGetResponse' },
  DeploymentList: { module: 'workers/scripts/deployments', type: '$.DeploymentListResponse' },
  Deployment: { module: 'workers/scripts/deployments', type: '$.Deployment' },
  DeploymentDelete: { module: 'workers/scripts/deployments', type: '$.DeploymentDeleteResponse', wholeBody: true },
  Settings: { module: 'workers/scripts/script-and-version-settings', type: '$.ScriptAndVersionSettingGetResponse' },
  SettingsEdit: {
    module: 'workers/scripts/script-and-version-settings',
    type: '$.ScriptAndVersionSettingEditResponse',
  },
  ScriptSetting: { module: 'workers/scripts/scripts', type: '$.ScriptSetting' },
  AccountSubdomain: { module: 'workers/subdomains', type: '$.SubdomainGetResponse' },
  AccountSubdomainUpdate: { module: 'workers/subdomains', type: '$.SubdomainUpdateResponse' },
  ScriptSubdomain: { module: 'workers/scripts/subdomain', type: '$.SubdomainGetResponse' },
  ScriptSubdomainCreate: { module: 'workers/scripts/subdomain', type: '$.SubdomainCreateResponse' },
  ScriptSubdomainDelete: { module: 'workers/scripts/subdomain', type: '$.SubdomainDeleteResponse' },
  SecretList: { module: 'workers/scripts/secrets', type: 'Array<$.SecretListResponse>' },
  SecretUpdate: { module: 'workers/scripts/secrets', type: '$.SecretUpdateResponse' },
  SecretGet: { module: 'workers/scripts/secrets', type: '$.SecretGetResponse' },
  SecretBulkUpdate: { module: 'workers/scripts/secrets', type: '$.SecretBulkUpdateResponse' },

  Bucket: { module: 'r2/buckets/buckets', type: '$.Bucket' },
  BucketList: { module: 'r2/buckets/buckets', type: '$.BucketListResponse' },
  ObjectList: { module: 'r2/buckets/objects', type: 'Array<$.ObjectListResponse>' },
  ObjectUpload: { module: 'r2/buckets/objects', type: '$.ObjectUploadResponse' },
  ObjectDelete: { module: 'r2/buckets/objects', type: '$.ObjectDeleteResponse' },
  Lifecycle: { module: 'r2/buckets/lifecycle', type: '$.LifecycleGetResponse' },
  Cors: { module: 'r2/buckets/cors', type: '$.CORSGetResponse' },
  ManagedDomain: { module: 'r2/buckets/domains/managed', type: '$.ManagedListResponse' },
  ManagedDomainUpdate: { module: 'r2/buckets/domains/managed', type: '$.ManagedUpdateResponse' },
  CustomDomainList: { module: 'r2/buckets/domains/custom', type: '$.CustomListResponse' },
  CustomDomainCreate: { module: 'r2/buckets/domains/custom', type: '$.CustomCreateResponse' },
  CustomDomain: { module: 'r2/buckets/domains/custom', type: '$.CustomGetResponse' },
  CustomDomainUpdate: { module: 'r2/buckets/domains/custom', type: '$.CustomUpdateResponse' },
  CustomDomainDelete: { module: 'r2/buckets/domains/custom', type: '$.CustomDeleteResponse' },
  TempCredentials: { module: 'r2/temporary-credentials', type: '$.TemporaryCredentialCreateResponse' },
} satisfies Record<string, SdkType>;

export type SdkTypeName = keyof typeof SDK_TYPES;

/** How a route answers, as the SDK types it. */
export type RouteType =
  | { sdk: SdkTypeName }
  /** The SDK types the result `unknown` (deletes that answer `null` or a tombstone): any JSON result passes. */
  | { sdk: 'unknown' }
  /** Not a JSON envelope in the SDK either (the script's source, a raw object body). */
  | { raw: string }
  /** Ledge answers only with a clear error here (a feature it does not have): no success answer to check. */
  | { unsupported: string }
  /** No SDK method: a route wrangler calls that the SDK does not wrap, or a Ledge extension. Why, in words. */
  | { notInSdk: string };

const A = '/client/v4/accounts/:account_id';
const W = `${A}/workers`;
const LB = `${A}/load_balancers`;
const AL = `${A}/alerting/v3`;
const R2 = `${A}/r2/buckets`;

/** Every route of the API, keyed `METHOD path` exactly as Hono registers it. */
export const ROUTE_TYPES: Record<string, RouteType> = {
  'GET /client/v4/user': { sdk: 'User' },
  'PATCH /client/v4/user': { sdk: 'UserEdit' },
  'GET /client/v4/user/tokens/verify': { sdk: 'TokenVerify' },
  'GET /client/v4/accounts': { sdk: 'AccountList' },
  [`GET ${A}`]: { sdk: 'Account' },
  [`PUT ${A}`]: { sdk: 'Account' },
  'GET /client/v4/memberships': { sdk: 'MembershipList' },
  'GET /client/v4/memberships/:membership_id': { sdk: 'MembershipGet' },
  'PUT /client/v4/memberships/:membership_id': { sdk: 'MembershipUpdate' },
  'DELETE /client/v4/memberships/:membership_id': { sdk: 'MembershipDelete' },

  'GET /client/v4/zones': { sdk: 'ZoneList' },
  'POST /client/v4/zones': { sdk: 'Zone' },
  'GET /client/v4/zones/:zone_id': { sdk: 'Zone' },
  'DELETE /client/v4/zones/:zone_id': { sdk: 'ZoneDelete' },
  'GET /client/v4/zones/:zone_id/load_balancers': { sdk: 'LoadBalancerList' },
  'POST /client/v4/zones/:zone_id/load_balancers': { sdk: 'LoadBalancer' },
  'GET /client/v4/zones/:zone_id/load_balancers/:load_balancer_id': { sdk: 'LoadBalancer' },
  'PUT /client/v4/zones/:zone_id/load_balancers/:load_balancer_id': { sdk: 'LoadBalancer' },
  'PATCH /client/v4/zones/:zone_id/load_balancers/:load_balancer_id': { sdk: 'LoadBalancer' },
  'DELETE /client/v4/zones/:zone_id/load_balancers/:load_balancer_id': { sdk: 'LoadBalancerDelete' },

  [`GET ${LB}/pools`]: { sdk: 'PoolList' },
  [`POST ${LB}/pools`]: { sdk: 'Pool' },
  [`PATCH ${LB}/pools`]: { sdk: 'PoolList' },
  [`GET ${LB}/pools/:pool_id`]: { sdk: 'Pool' },
  [`PUT ${LB}/pools/:pool_id`]: { sdk: 'Pool' },
  [`PATCH ${LB}/pools/:pool_id`]: { sdk: 'Pool' },
  [`DELETE ${LB}/pools/:pool_id`]: { sdk: 'PoolDelete' },
  [`GET ${LB}/pools/:pool_id/health`]: { sdk: 'PoolHealth' },
  [`GET ${LB}/pools/:pool_id/references`]: { sdk: 'PoolReferences' },
  [`POST ${LB}/pools/:pool_id/preview`]: { sdk: 'PoolPreview' },
  [`GET ${LB}/preview/:preview_id`]: { sdk: 'PreviewResult' },
  [`GET ${LB}/monitors`]: { sdk: 'MonitorList' },
  [`POST ${LB}/monitors`]: { sdk: 'Monitor' },
  [`GET ${LB}/monitors/:monitor_id`]: { sdk: 'Monitor' },
  [`PUT ${LB}/monitors/:monitor_id`]: { sdk: 'Monitor' },
  [`PATCH ${LB}/monitors/:monitor_id`]: { sdk: 'Monitor' },
  [`DELETE ${LB}/monitors/:monitor_id`]: { sdk: 'MonitorDelete' },
  [`GET ${LB}/monitors/:monitor_id/references`]: { sdk: 'MonitorReferences' },
  [`POST ${LB}/monitors/:monitor_id/preview`]: { sdk: 'MonitorPreview' },

  [`GET ${AL}/available_alerts`]: { sdk: 'AvailableAlerts' },
  [`GET ${AL}/destinations/eligible`]: { sdk: 'Eligible' },
  [`GET ${AL}/policies`]: { sdk: 'PolicyList' },
  [`POST ${AL}/policies`]: { sdk: 'PolicyCreate' },
  [`GET ${AL}/policies/:policy_id`]: { sdk: 'Policy' },
  [`PUT ${AL}/policies/:policy_id`]: { sdk: 'PolicyUpdate' },
  [`DELETE ${AL}/policies/:policy_id`]: { sdk: 'PolicyDelete' },
  [`GET ${AL}/destinations/webhooks`]: { sdk: 'WebhookList' },
  [`POST ${AL}/destinations/webhooks`]: { sdk: 'WebhookCreate' },
  [`GET ${AL}/destinations/webhooks/:webhook_id`]: { sdk: 'Webhook' },
  [`PUT ${AL}/destinations/webhooks/:webhook_id`]: { sdk: 'WebhookUpdate' },
  [`DELETE ${AL}/destinations/webhooks/:webhook_id`]: { sdk: 'WebhookDelete' },
  [`GET ${AL}/history`]: { sdk: 'History' },
  [`GET ${AL}/legacy_migration`]: { notInSdk: 'Ledge extension: the notification_email migration status' },

  [`POST ${W}/scripts/:script/tails`]: { sdk: 'TailCreate' },
  [`GET ${W}/scripts/:script/tails`]: {
    notInSdk: "the script's tail sessions as a list (the SDK's tail.get types one session; a script may have several)",
  },
  [`DELETE ${W}/scripts/:script/tails/:tail_id`]: { sdk: 'unknown' },
  [`GET ${W}/scripts/:script/tail`]: {
    notInSdk: 'Ledge extension: the console lines `ledge tail --history` reads (NDJSON)',
  },
  [`PUT ${W}/scripts/:script/schedules`]: { sdk: 'ScheduleUpdate' },
  [`GET ${W}/scripts/:script/schedules`]: { sdk: 'ScheduleGet' },
  [`GET ${W}/scripts/:script/schedules/runs`]: { notInSdk: 'Ledge extension: the recorded Cron Trigger runs' },
  [`GET ${W}/runtime/scripts`]: {
    notInSdk: 'Ledge extension: whether each deployed script runs on this node, or why it is quarantined',
  },
  [`POST ${W}/scripts/:script/schedules/trigger`]: { notInSdk: 'Ledge extension: run scheduled() now' },
  ['GET /metrics']: { notInSdk: 'Prometheus text exposition (outside /client/v4), not a v4 route' },
  ['GET /healthz']: {
    notInSdk: 'readiness check for a load balancer in front of nodes (outside /client/v4), not a v4 route',
  },
  [`GET ${W}/subdomain/edge-preview`]: { notInSdk: 'wrangler dev --remote internals, not in the SDK' },
  [`GET ${W}/scripts/:script/subdomain/edge-preview`]: { notInSdk: 'wrangler dev --remote internals' },
  ['GET /client/v4/zones/:zone_id/workers/edge-preview']: { notInSdk: 'wrangler dev --remote internals' },
  [`POST ${W}/scripts/:script/edge-preview`]: { notInSdk: 'wrangler dev --remote internals' },
  [`GET ${W}/scripts`]: { sdk: 'ScriptList' },
  [`PUT ${W}/scripts/:script`]: { sdk: 'ScriptUpdate' },
  [`GET ${W}/scripts/:script`]: { raw: 'the main module source (the SDK types it `string`)' },
  [`DELETE ${W}/scripts/:script`]: { sdk: 'unknown' },
  [`GET ${W}/services/:script`]: { notInSdk: 'the services API wrangler reads before a deploy; the SDK dropped it' },
  [`GET ${W}/workers/:script`]: { sdk: 'Worker' },
  [`POST ${W}/scripts/:script/versions`]: { sdk: 'VersionCreate' },
  [`GET ${W}/scripts/:script/versions`]: { sdk: 'VersionList' },
  [`GET ${W}/scripts/:script/versions/:version`]: { sdk: 'Version' },
  [`GET ${W}/scripts/:script/deployments`]: { sdk: 'DeploymentList' },
  [`POST ${W}/scripts/:script/deployments`]: { sdk: 'Deployment' },
  [`GET ${W}/scripts/:script/deployments/:deployment`]: { sdk: 'Deployment' },
  [`DELETE ${W}/scripts/:script/deployments/:deployment`]: { sdk: 'DeploymentDelete' },
  [`GET ${W}/scripts/:script/settings`]: { sdk: 'Settings' },
  [`PATCH ${W}/scripts/:script/settings`]: { sdk: 'SettingsEdit' },
  [`GET ${W}/scripts/:script/script-settings`]: { sdk: 'ScriptSetting' },
  [`PATCH ${W}/scripts/:script/script-settings`]: { sdk: 'ScriptSetting' },
  [`GET ${W}/subdomain`]: { sdk: 'AccountSubdomain' },
  [`PUT ${W}/subdomain`]: { sdk: 'AccountSubdomainUpdate' },
  [`DELETE ${W}/subdomain`]: { sdk: 'unknown' },
  [`GET ${W}/scripts/:script/subdomain`]: { sdk: 'ScriptSubdomain' },
  [`POST ${W}/scripts/:script/subdomain`]: { sdk: 'ScriptSubdomainCreate' },
  [`DELETE ${W}/scripts/:script/subdomain`]: { sdk: 'ScriptSubdomainDelete' },
  [`GET ${W}/scripts/:script/secrets`]: { sdk: 'SecretList' },
  [`PUT ${W}/scripts/:script/secrets`]: { sdk: 'SecretUpdate' },
  [`PATCH ${W}/scripts/:script/secrets-bulk`]: { sdk: 'SecretBulkUpdate' },
  [`GET ${W}/scripts/:script/secrets/:name`]: { sdk: 'SecretGet' },
  [`DELETE ${W}/scripts/:script/secrets/:name`]: { sdk: 'unknown' },

  [`POST ${R2}`]: { sdk: 'Bucket' },
  [`GET ${R2}`]: { sdk: 'BucketList' },
  [`GET ${R2}/:bucket_name`]: { sdk: 'Bucket' },
  [`PATCH ${R2}/:bucket_name`]: { sdk: 'Bucket' },
  [`DELETE ${R2}/:bucket_name`]: { sdk: 'unknown' },
  [`PUT ${R2}/:bucket_name/objects/:key{.+}`]: { sdk: 'ObjectUpload' },
  [`GET ${R2}/:bucket_name/objects/:key{.+}`]: { raw: 'the object body (the SDK types it `Response`)' },
  [`DELETE ${R2}/:bucket_name/objects/:key{.+}`]: { sdk: 'ObjectDelete' },
  [`GET ${R2}/:bucket_name/objects`]: { sdk: 'ObjectList' },
  [`GET ${R2}/:bucket_name/lifecycle`]: { sdk: 'Lifecycle' },
  [`PUT ${R2}/:bucket_name/lifecycle`]: { sdk: 'unknown' },
  [`GET ${R2}/:bucket_name/cors`]: { sdk: 'Cors' },
  [`PUT ${R2}/:bucket_name/cors`]: { sdk: 'unknown' },
  [`DELETE ${R2}/:bucket_name/cors`]: { sdk: 'unknown' },
  [`POST ${A}/r2/temp-access-credentials`]: { sdk: 'TempCredentials' },
  [`GET ${R2}/:bucket_name/domains/managed`]: { sdk: 'ManagedDomain' },
  [`PUT ${R2}/:bucket_name/domains/managed`]: { sdk: 'ManagedDomainUpdate' },
  [`GET ${R2}/:bucket_name/domains/custom`]: { sdk: 'CustomDomainList' },
  [`POST ${R2}/:bucket_name/domains/custom`]: { sdk: 'CustomDomainCreate' },
  [`GET ${R2}/:bucket_name/domains/custom/:domain`]: { sdk: 'CustomDomain' },
  [`PUT ${R2}/:bucket_name/domains/custom/:domain`]: { sdk: 'CustomDomainUpdate' },
  [`DELETE ${R2}/:bucket_name/domains/custom/:domain`]: { sdk: 'CustomDomainDelete' },
};
