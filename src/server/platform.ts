import { AccountService, SqliteAccountStore } from '../accounts/index.ts';
import { Database, migrate } from '../db/index.ts';
import { EgressPolicy } from '../egress/index.ts';
import { HealthEventBus, LoadBalancing, loadBalancingSettings, PoolEnablementBus } from '../load-balancing/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { createMailer, NotificationService, notificationSettings } from '../notifications/index.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { createFunctions, type FunctionsPlatform } from '../workers/index.ts';
import { FsBlobStore, SqliteMetadataStore, StorageService } from '../storage/index.ts';
import { R2WireBackend } from '../r2/index.ts';
import { join } from 'node:path';
import type { ServerConfig } from './config.ts';
import { dataPaths, ensureDataDir, loadSecretBox } from './data-dir.ts';
import { allMigrations } from './migrations.ts';
import { SqliteZoneStore, ZoneService } from '../zones/index.ts';
import { TrafficListener, trafficSettings } from '../load-balancing/traffic/index.ts';
import { httpTimeouts } from '../shared/http-timeouts.ts';

/** A long-running part of the platform (health checker, dispatcher, runtime supervisor). */
export interface BackgroundService {
  name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/**
 * Every service of one running platform, composed once in dependency order. Subsystems receive what
 * they need from here; nothing reaches for globals.
 */
export interface Platform {
  config: ServerConfig;
  paths: ReturnType<typeof dataPaths>;
  db: Database;
  logger: Logger;
  secretBox: SecretBox;
  /** Which addresses monitors, previews and webhooks may reach (operator lists, never Ledge's own listeners). */
  egress: EgressPolicy;
  accounts: AccountService;
  /** Health events of pools and origins; notifications subscribes (see src/load-balancing/health/events.ts). */
  healthEvents: HealthEventBus;
  /** Pools switched on or off (notifications' load_balancing_pool_enablement_alert). */
  poolEnablement: PoolEnablementBus;
  /** Zones (hostnames owned by accounts) that load balancers live in. */
  zones: ZoneService;
  loadBalancing: LoadBalancing;
  /** The load balancers' data plane: the traffic port, proxying by Host to steered origins. */
  traffic: TrafficListener;
  /** Alert policies, webhook destinations, the delivery outbox and its dispatcher. */
  notifications: NotificationService;
  /** Functions: scripts, deployments, secrets (`functions.workers`), the workerd supervisor, function logs. */
  functions: FunctionsPlatform;
  /** Object storage engine: buckets, objects, multipart; `storage.getBucket(accountId, name)`. */
  storage: StorageService;
  /** The R2 wire backend workerd's r2Bucket bindings talk to (`<dataDir>/runtime/r2.sock`). */
  r2Backend: R2WireBackend;
  /** Started after the API listens, stopped in reverse order on shutdown. */
  background: BackgroundService[];
}

export function createPlatform(
  config: ServerConfig,
  logger: Logger = createLogger(config.logLevel, {}, undefined, config.logFormat),
): Platform {
  ensureDataDir(config.dataDir);
  const paths = dataPaths(config.dataDir);
  const db = new Database(paths.database);
  migrate(db, allMigrations);
  const secretBox = loadSecretBox(config.dataDir, config.secretKey);
  const accounts = new AccountService(new SqliteAccountStore(db));
  const background: BackgroundService[] = [];
  const blobs = new FsBlobStore(paths.blobs);
  const storage = new StorageService(new SqliteMetadataStore(db), blobs, {
    logger,
    lifecycleIntervalMs: positiveInteger(config.env['LEDGE_R2_LIFECYCLE_INTERVAL_MS']),
  });
  const r2Backend = new R2WireBackend(storage, join(paths.runtime, 'r2.sock'), logger);
  // Orphan collection and the upload expiry sweep, then the socket workerd's bindings use.
  background.push({ name: 'storage', start: () => storage.start(), stop: () => storage.stop() }, r2Backend);
  // Bucket lifecycle rules (expiry, upload aborts, storage-class transitions).
  background.push(storage.lifecycle);
  const egress = new EgressPolicy(config.egress);
  egress.addOwnListener(config.port, 'API');
  egress.addOwnListener(config.functionsPort, 'functions');
  const healthEvents = new HealthEventBus();
  const poolEnablement = new PoolEnablementBus();
  const zones = new ZoneService(new SqliteZoneStore(db), accounts);
  const loadBalancing = new LoadBalancing({
    db,
    logger,
    bus: healthEvents,
    enablement: poolEnablement,
    settings: loadBalancingSettings(config.env),
    egress,
    // A load balancer on Ledge's own names would take their traffic or proxy back into Ledge.
    reservedHostnames: { domains: ['localhost', config.functionsDomain, config.host] },
    zoneOfHostname: (hostname) => zones.owningZone(hostname),
  });
  zones.beforeDelete((zone) =>
    loadBalancing.loadBalancers.removeZone({ id: zone.id, name: zone.name, accountId: zone.account_id }),
  );
  background.push(loadBalancing.checker);
  // Subscribed before anything runs, so no health event is recorded without its deliveries.
  const notifications = new NotificationService({
    db,
    secretBox,
    logger,
    pools: loadBalancing,
    mailer: createMailer({ smtpUrl: config.smtpUrl, mailDir: paths.mail }),
    egress,
    ...notificationSettings(config.env),
  });
  notifications.subscribeTo(healthEvents, poolEnablement);
  background.push(notifications.dispatcher, notifications.retention);
  const functions = createFunctions({
    config,
    db,
    secretBox,
    accounts,
    logger,
    paths,
    buckets: { bucketExists: async (accountId, name) => (await storage.getBucket(accountId, name)) !== undefined },
    r2: { workerdService: (accountId, name) => r2Backend.workerdService(accountId, name) },
  });
  // With --functions-port 0 the real port is known once the runtime listens.
  egress.addOwnListener(() => functions.runtime.port, 'functions');
  // Started after the storage backend (bindings reach it) and stopped before it.
  background.push(functions.runtime);
  const traffic = new TrafficListener({
    host: config.host,
    port: config.trafficPort,
    directory: loadBalancing.directory,
    health: loadBalancing.health,
    healthEvents,
    egress,
    settings: trafficSettings(config.env),
    httpTimeouts: httpTimeouts(config.env),
    logger: logger.child({ component: 'lb-traffic' }),
  });
  // Origins are never Ledge's own traffic port (a load balancer proxying to itself would loop).
  egress.addOwnListener(() => traffic.port ?? (config.trafficPort || undefined), 'load balancer traffic');
  // Last to start, first to stop: traffic flows only while everything it steers by is running.
  background.push(traffic);
  return {
    config,
    paths,
    db,
    logger,
    secretBox,
    egress,
    accounts,
    healthEvents,
    poolEnablement,
    zones,
    loadBalancing,
    traffic,
    notifications,
    functions,
    storage,
    r2Backend,
    background,
  };
}

/** An operator-set interval in ms, or undefined (the default) when unset or not a positive integer. */
function positiveInteger(raw: string | undefined): number | undefined {
  return raw !== undefined && /^[1-9]\d*$/.test(raw) ? Number(raw) : undefined;
}
