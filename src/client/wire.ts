/**
 * The answers of /client/v4, typed by the official SDK (`cloudflare`): the same types test/api/sdk-types checks
 * every route's answer against, so the CLI, the dashboard and the API share one contract. The SDK marks every
 * field optional (Cloudflare may leave any out); `Sent` narrows the fields Ledge's API always sends, which that
 * check also holds it to. Type-only imports: nothing of the SDK is loaded at run time.
 */
import type { Pool as SdkPool } from 'cloudflare/resources/load-balancers/pools/pools';
import type { HealthGetResponse } from 'cloudflare/resources/load-balancers/pools/health';
import type { ReferenceGetResponse } from 'cloudflare/resources/load-balancers/pools/references';
import type { Monitor as SdkMonitor } from 'cloudflare/resources/load-balancers/monitors/monitors';
import type {
  LoadBalancer as SdkLoadBalancer,
  Origin as SdkOrigin,
} from 'cloudflare/resources/load-balancers/load-balancers';
import type { Policy as SdkPolicy } from 'cloudflare/resources/alerting/policies';
import type { BaseWebhooks, Webhooks as SdkWebhookAndClass } from 'cloudflare/resources/alerting/destinations/webhooks';
import type { History as SdkHistory } from 'cloudflare/resources/alerting/history';
import type { Member as SdkMember, Role as SdkRole, Token as SdkToken } from 'cloudflare/resources/shared';
import type { Membership as SdkMembership } from 'cloudflare/resources/memberships/memberships';
import type { Zone as SdkZone } from 'cloudflare/resources/zones/zones';
import type { Bucket as SdkBucket } from 'cloudflare/resources/r2/buckets/buckets';
import type { CORSGetResponse } from 'cloudflare/resources/r2/buckets/cors';
import type { LifecycleGetResponse } from 'cloudflare/resources/r2/buckets/lifecycle';
import type { ObjectListResponse, ObjectUploadResponse } from 'cloudflare/resources/r2/buckets/objects';
import type { ScriptListResponse } from 'cloudflare/resources/workers/scripts/scripts';
import type { Deployment as SdkDeployment } from 'cloudflare/resources/workers/scripts/deployments';
import type { ScriptAndVersionSettingGetResponse } from 'cloudflare/resources/workers/scripts/script-and-version-settings';
import type { SecretListResponse } from 'cloudflare/resources/workers/scripts/secrets';
import type { ScheduleGetResponse } from 'cloudflare/resources/workers/scripts/schedules';
import type { SubdomainGetResponse } from 'cloudflare/resources/workers/scripts/subdomain';

/** `T` with the fields `K` present (what Ledge always sends of an SDK type). */
export type Sent<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> };

export type Origin = Sent<SdkOrigin, 'name' | 'address' | 'enabled' | 'weight'>;
export type Pool = Sent<
  Omit<SdkPool, 'origins'>,
  'id' | 'name' | 'description' | 'enabled' | 'minimum_origins' | 'notification_email' | 'created_on' | 'modified_on'
> & { origins: Origin[] };
export type Monitor = Sent<
  SdkMonitor,
  'id' | 'type' | 'description' | 'method' | 'path' | 'interval' | 'timeout' | 'retries' | 'expected_codes'
>;
export type OriginHealth = Sent<HealthGetResponse.POPHealth.Origin.IP, 'healthy' | 'failure_reason'>;
/**
 * `GET /pools/{id}/health`. The SDK types `pop_health` as one region whose origins are `{ ip }`; the API (Cloudflare's
 * documented examples, and Ledge) answers a record of regions, each origin an object keyed by its address, in the
 * pool's order of enabled origins. The SDK's check passes both (every field optional); the shape here is the real one.
 */
export interface PoolHealth {
  pool_id: string;
  pop_health: Record<
    string,
    Sent<Omit<HealthGetResponse.POPHealth, 'origins'>, 'healthy'> & { origins: Record<string, OriginHealth>[] }
  >;
}
export type PoolReference = ReferenceGetResponse;
export type LoadBalancer = Sent<SdkLoadBalancer, 'id' | 'name' | 'enabled' | 'default_pools' | 'fallback_pool'>;
export type NotificationPolicy = Sent<
  SdkPolicy,
  'id' | 'name' | 'description' | 'enabled' | 'alert_type' | 'mechanisms' | 'filters' | 'created' | 'modified'
>;
/** `Webhooks` is both the SDK's resource class and the destination's interface: the class's methods are left out. */
type SdkWebhook = Omit<SdkWebhookAndClass, keyof BaseWebhooks>;
export type WebhookDestination = Sent<SdkWebhook, 'id' | 'name' | 'url' | 'type' | 'created_at'>;
/** Ledge adds each delivery attempt's outcome to Cloudflare's history item. */
export type NotificationHistoryItem = Sent<
  SdkHistory,
  'id' | 'name' | 'alert_type' | 'description' | 'mechanism' | 'mechanism_type' | 'alert_body' | 'sent'
> & { status?: string; attempt?: number; error?: string | null };
export type ApiToken = Sent<SdkToken, 'id' | 'name' | 'status' | 'issued_on' | 'policies'>;
export type Zone = SdkZone;
export type Role = SdkRole;
export type Member = Sent<Omit<SdkMember, 'roles'>, 'id' | 'email' | 'status'> & { roles: Role[] };
export type Membership = Sent<SdkMembership, 'id' | 'status' | 'account'>;
export type Bucket = Sent<SdkBucket, 'name' | 'creation_date'>;
export type BucketCors = CORSGetResponse;
export type CorsRule = CORSGetResponse.Rule;
export type BucketLifecycle = LifecycleGetResponse;
export type LifecycleRule = LifecycleGetResponse.Rule;
/**
 * An object of a listing (`GET …/objects`). Ledge also sends `uploaded` (the name of the upload's answer, the same
 * time as `last_modified`), which the CLI and the dashboard show.
 */
export type ObjectSummary = Sent<ObjectListResponse, 'key' | 'size' | 'etag'> & { uploaded: string };
/** The answer to an upload (`PUT …/objects/{key}`, and a completed multipart upload): `size` is a string there. */
export type UploadedObject = Sent<ObjectUploadResponse, 'key' | 'size' | 'etag' | 'uploaded'>;
export type Script = Sent<ScriptListResponse, 'id' | 'created_on' | 'modified_on'>;
export type Deployment = SdkDeployment;
export type ScriptSettings = ScriptAndVersionSettingGetResponse;
export type ScriptBinding = NonNullable<ScriptSettings['bindings']>[number];
export type SecretSummary = SecretListResponse;
export type CronSchedule = Sent<ScheduleGetResponse.Schedule, 'created_on' | 'modified_on'>;
/** Ledge adds where the function answers. */
export type ScriptSubdomain = SubdomainGetResponse & { url?: string };
