import type { AccountService } from '../accounts/index.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';
import type { SqlDatabase } from '../db/index.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import type { StorageService } from '../storage/index.ts';
import type { ZoneService } from '../zones/index.ts';
import { analyticsGraphqlRoutes } from './analytics-graphql.ts';
import {
  domainRoutes,
  PublicAccessService,
  publicBucketHandler,
  PublicHostDirectory,
  SqlPublicDomainStore,
  type PublicBucketHandler,
} from './public/index.ts';
import { r2Routes } from './routes.ts';
import { tempCredentialRoutes, TemporaryCredentialService } from './temp-credentials/index.ts';
import { R2WireBackend } from './wire/backend.ts';
import type { Clock } from '../shared/clock.ts';

export interface R2Subsystem extends Subsystem {
  storage: StorageService;
  /** The socket workerd's r2Bucket bindings talk to. */
  wire: R2WireBackend;
  /** R2's temporary S3 credentials: minted by the API, resolved by the S3 endpoint (`resolve`). */
  tempCredentials: TemporaryCredentialService;
  /** Public access: the managed URL switch and custom domains (the routes, and hooks for zones and other nodes). */
  publicAccess: PublicAccessService;
  /** Which hostnames serve a public bucket (reload with `refreshSoon` when another node changed them). */
  publicHosts: PublicHostDirectory;
  /** Serves public buckets on the traffic port (the traffic listener's host hook). */
  publicHandler: PublicBucketHandler;
}

/**
 * Object storage over HTTP and for functions: the bucket and object routes, the wire backend, and the
 * storage engine's own upkeep (orphan collection, upload expiry, lifecycle rules) as background services.
 */
export function createR2Subsystem(deps: {
  storage: StorageService;
  accounts: Pick<AccountService, 's3KeyPair'>;
  socketPath: string;
  logger: Logger;
  metrics?: LedgeMetrics | undefined;
  db: SqlDatabase;
  zones: Pick<ZoneService, 'resolve' | 'owningZone'>;
  /** Managed public URLs are `pub-<bucket id>.<this>` (LEDGE_R2_PUBLIC_DOMAIN, src/server/settings/schema.ts). */
  publicDomain: string;
  /** Whether a load balancer already serves a hostname (a custom domain may not take it). */
  hostnameTaken?: ((hostname: string) => Promise<boolean>) | undefined;
  /** The traffic port public buckets are served on, once it listens. */
  publicPort?: (() => number | undefined) | undefined;
  /** Temporary credentials are issued and expire on it (tests pass a clock they advance). */
  clock: Clock;
}): R2Subsystem {
  const { storage } = deps;
  const wire = new R2WireBackend(storage, deps.socketPath, deps.logger, deps.metrics);
  const tempCredentials = new TemporaryCredentialService({
    s3KeyPair: (accessKeyId) => deps.accounts.s3KeyPair(accessKeyId),
    bucketExists: async (accountId, name) => (await storage.getBucket(accountId, name)) !== undefined,
    clock: deps.clock,
  });
  const publicStore = new SqlPublicDomainStore(deps.db, deps.clock);
  const publicAccess = new PublicAccessService(
    {
      store: publicStore,
      storage,
      zones: deps.zones,
      managedSuffix: deps.publicDomain,
      hostnameTaken: deps.hostnameTaken,
      publicPort: deps.publicPort,
    },
    deps.clock,
  );
  const publicHosts = new PublicHostDirectory({
    store: publicStore,
    managedHostname: (bucketId) => publicAccess.managedHostname(bucketId),
    logger: deps.logger,
  });
  // This node serves what it just changed by the time the API answers (a failed reload is logged and retried).
  publicAccess.onChange(() => publicHosts.refresh().catch(() => publicHosts.refreshSoon()));
  // A deleted bucket takes its public hostnames with it (its rows go by foreign key).
  storage.buckets.onChanged(() => publicHosts.refreshSoon());
  const publicHandler = publicBucketHandler({ directory: publicHosts, storage, logger: deps.logger });
  return {
    name: 'r2',
    storage,
    wire,
    tempCredentials,
    publicAccess,
    publicHosts,
    publicHandler,
    background: [
      { name: 'storage', start: () => storage.start(), stop: () => storage.stop() },
      wire,
      storage.lifecycle,
      publicHosts,
    ],
    mountRoutes: (api) => {
      api.route('/', r2Routes(storage, deps.metrics));
      api.route('/', tempCredentialRoutes(tempCredentials));
      api.route('/', domainRoutes(publicAccess));
      api.route('/', analyticsGraphqlRoutes(storage, deps.clock));
    },
  };
}
