import { SETTINGS } from './settings/index.ts';
import { createAccountsSubsystem, type AccountService } from '../accounts/index.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';
import { applyMigrations, openDatabase, type SqlDatabase } from '../db/index.ts';
import { EgressPolicy } from '../egress/index.ts';
import {
  createLoadBalancingSubsystem,
  HealthEventBus,
  PoolEnablementBus,
  type LoadBalancing,
} from '../load-balancing/index.ts';
import type { BackgroundService, JobGate } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import { AccessChanges } from '../shared/grant-watch.ts';
import { Cluster } from '../cluster/index.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { createMailer, createNotificationsSubsystem, type NotificationService } from '../notifications/index.ts';
import { LedgeMetrics } from '../shared/ledge-metrics.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { ClusterObjects, createWorkersSubsystem, type FunctionsPlatform } from '../workers/index.ts';
import { createKvSubsystem } from '../kv/index.ts';
import {
  EngineHost,
  engineKinds,
  QUEUE_RELAY_ENTRYPOINT,
  type Binding,
  type EnginesClusterSettings,
} from '../workerd/index.ts';
import { ObjectChanges, SqlMetadataStore, StorageService, type BlobStore } from '../storage/index.ts';
import { createR2Subsystem, type R2WireBackend, type TemporaryCredentialService } from '../r2/index.ts';
import { join } from 'node:path';
import type { ServerConfig } from './config.ts';
import { dataPaths, ensureDataDir, loadSecretBox, nodeIdOf, rememberDatabaseUrl } from './data-dir.ts';
import { allMigrations } from './migrations.ts';
import { checkSecretKey } from './secret-key-check.ts';
import { openAssetBlobStore, openBlobStore, shareBucketChanges, SHARED_STORE_MARGIN_MS } from './storage.ts';
import { createZonesSubsystem, type ZoneService } from '../zones/index.ts';
import { TrafficListener } from '../load-balancing/traffic/index.ts';
import { createWorkerRoutesSubsystem, type WorkerRoutesSubsystem } from '../worker-routes/index.ts';
import { ROUTED_SCRIPT_HEADER, routedScriptKey } from '../workers/index.ts';
import { createDashboard, type Dashboard } from '../dashboard/index.ts';
import {
  CLUSTER_STORE_ACCOUNT,
  CLUSTER_STORE_BUCKET,
  ClusterStore,
  createS3Subsystem,
  type S3Listener,
} from '../s3/index.ts';
import { createD1Subsystem } from '../d1/index.ts';
import { createQueuesSubsystem } from '../queues/index.ts';
import { createWorkflowsSubsystem } from '../workflows/index.ts';
import { createTlsSubsystem, type TlsSubsystem } from '../tls/index.ts';
import { servedHostnames } from './served-hostnames.ts';

export type { BackgroundService } from '../shared/background-service.ts';

/**
 * Every service of one running platform, composed once in dependency order. Subsystems receive what
 * they need from here; nothing reaches for globals.
 */
export interface Platform {
  config: ServerConfig;
  paths: ReturnType<typeof dataPaths>;
  /** Every record: SQLite in the data dir, or PostgreSQL with --database-url (see src/db/sql.ts). */
  db: SqlDatabase;
  logger: Logger;
  /** The figures /metrics exposes; subsystems count into it (see src/shared/ledge-metrics.ts). */
  metrics: LedgeMetrics;
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
  /** Workers routes and Custom Domains (their table is what the traffic port consults first). */
  workerRoutes: WorkerRoutesSubsystem;
  loadBalancing: LoadBalancing;
  /** The load balancers' data plane: the traffic port, proxying by Host to steered origins. */
  traffic: TrafficListener;
  /** HTTPS on the traffic TLS port: uploaded and ACME certificates, zone TLS settings (src/tls/). */
  tls: TlsSubsystem;
  /** The S3 API on its own port (`--s3-api-port`), over the same storage engine. */
  s3Api: S3Listener;
  /** Alert policies, webhook destinations, the delivery outbox and its dispatcher. */
  notifications: NotificationService;
  /** Functions: scripts, deployments, secrets (`functions.workers`), the workerd supervisor, function logs. */
  functions: FunctionsPlatform;
  /** The accounts' data engines processes (workerd's bundled KV and D1 engines), src/workerd/engine-host.ts. */
  engines: EngineHost;
  /** Object storage engine: buckets, objects, multipart; `storage.getBucket(accountId, name)`. */
  storage: StorageService;
  /** Where the engine keeps blobs: files in the data dir, or an S3-compatible bucket (--s3-*). */
  blobStore: BlobStore;
  /** The R2 wire backend workerd's r2Bucket bindings talk to (`<dataDir>/runtime/r2.sock`). */
  r2Backend: R2WireBackend;
  /** R2's temporary S3 credentials: `resolve(accessKeyId, sessionToken)` for the S3 endpoint. */
  tempCredentials: TemporaryCredentialService;
  /** Resolves while this node can serve (its database answers): `GET /healthz`. */
  ready(): Promise<void>;
  /** This node among the nodes sharing the database: change feed, live nodes, job leases. */
  cluster: Cluster;
  /** Every subsystem, in dependency order (src/api-kit/subsystem.ts); the API mounts their routes. */
  subsystems: Subsystem[];
  /** Their background services: started after the API listens, stopped in reverse order on shutdown. */
  background: BackgroundService[];
  /** The time background jobs and open streams' grant re-checks run on. */
  clock: Clock;
  /** Access taken away on this node (token deleted, member removed, signed out): open streams re-check at once. */
  accessChanges: AccessChanges;
  /** The browser dashboard at `/` (src/dashboard/): its page, sessions and live events. */
  dashboard: Dashboard;
}

export async function createPlatform(
  config: ServerConfig,
  /** The server's own (settings' level and format, on `clock`) when none is given. */
  givenLogger: Logger | undefined,
  /** The time every background job runs on (tests pass a clock they advance; see src/shared/clock.ts). */
  clock: Clock,
): Promise<Platform> {
  const logger = givenLogger ?? createLogger(config.logLevel, clock, {}, undefined, config.logFormat);
  const publicDomain = config.r2.publicDomain;
  ensureDataDir(config.dataDir);
  const paths = dataPaths(config.dataDir);
  const db = openDatabase(config.databaseUrl, paths.database);
  let secretBox: SecretBox;
  let blobStore: BlobStore;
  try {
    await applyMigrations(db, allMigrations, clock);
    secretBox = loadSecretBox(config.dataDir, config.secretKey);
    await checkSecretKey(db, secretBox, config.secretKey ? 'LEDGE_SECRET_KEY' : paths.secretKey, clock);
    rememberDatabaseUrl(config.dataDir, config.databaseUrl);
    blobStore = await openBlobStore(config, paths.blobs, logger);
  } catch (error) {
    await db.close();
    throw error;
  }
  const cluster = new Cluster({
    db,
    nodeId: nodeIdOf(config.dataDir, config.nodeId),
    logger: logger.child({ component: 'cluster' }),
    heartbeatMs: config.cluster.heartbeatMs,
    clock,
  });
  const gate: JobGate = (job, ttlMs) => cluster.mayRun(job, ttlMs);
  const metrics = new LedgeMetrics(clock);
  const egress = new EgressPolicy(config.egress, clock);
  egress.addOwnListener(config.port, 'API');
  egress.addOwnListener(config.functionsPort, 'functions');
  const healthEvents = new HealthEventBus();
  const poolEnablement = new PoolEnablementBus();
  const storage = new StorageService(new SqlMetadataStore(db, clock), blobStore, {
    logger,
    lifecycleIntervalMs: config.r2.lifecycleIntervalMs,
    gate,
    // See SHARED_STORE_MARGIN_MS: with blobs on S3 other nodes may be writing to the same bucket.
    sharedOrphanAgeMs: config.s3 ? SHARED_STORE_MARGIN_MS : undefined,
    // Only the embedded database has this process as its one writer: with PostgreSQL other nodes write
    // too, so functions cache no objects (a copy here could not be told of another node's write).
    objectChanges: db.dialect === 'sqlite' ? new ObjectChanges() : undefined,
    clock,
  });
  shareBucketChanges(storage, cluster);

  // Every subsystem through one contract (src/api-kit/subsystem.ts), in dependency order: routes are mounted
  // and background services started in this order, and stopped in reverse (the functions runtime after
  // the R2 wire backend its bindings reach, and before it).
  const accessChanges = new AccessChanges();
  const accounts = createAccountsSubsystem({ db, accessChanges, clock });
  const zones = createZonesSubsystem({ db, accounts: accounts.service, clock });
  const r2 = createR2Subsystem({
    storage,
    accounts: accounts.service,
    socketPath: join(paths.runtime, 'r2.sock'),
    logger,
    metrics,
    db,
    zones: zones.service,
    publicDomain,
    // Called per custom-domain request, after the load balancers exist.
    hostnameTaken: async (hostname) =>
      (await loadBalancing.service.directory.findByHostname(hostname)) !== undefined ||
      workerRoutes.directory.table.hasDomain(hostname),
    // The traffic listener is made further down; public URLs are only rendered once requests come.
    publicPort: () => traffic.port,
    clock,
  });
  const loadBalancing = createLoadBalancingSubsystem({
    db,
    logger,
    settings: config.loadBalancing,
    bus: healthEvents,
    enablement: poolEnablement,
    egress,
    // A load balancer on Ledge's own names would take their traffic or proxy back into Ledge.
    reservedHostnames: {
      domains: ['localhost', config.functionsDomain, config.host, publicDomain],
      servedElsewhere: (hostname) =>
        r2.publicHosts.claims(hostname) || workerRoutes.directory.table.hasDomain(hostname),
    },
    zoneOfHostname: (hostname) => zones.service.owningZone(hostname),
    resolveZone: (principal, zoneId) => zones.service.resolve(principal, zoneId),
    metrics,
    cluster,
    clock,
  });
  zones.service.beforeDelete((zone) =>
    loadBalancing.service.loadBalancers.removeZone({ id: zone.id, name: zone.name, accountId: zone.account_id }),
  );
  zones.service.beforeDelete((zone) => r2.publicAccess.removeZone(zone.id));
  const notifications = createNotificationsSubsystem({
    db,
    secretBox,
    logger,
    settings: config.notifications,
    pools: loadBalancing.service,
    mailer: createMailer({ smtpUrl: config.smtpUrl, mailDir: paths.mail, clock }),
    egress,
    metrics,
    // One owner per node for the outbox's claims and a poll of the table; a lone node keeps the owner it
    // always had.
    cluster: cluster.shared ? cluster : undefined,
    gate,
    healthEvents,
    poolEnablement,
    clock,
  });
  // The secret in the entry router's keys of routed scripts (workerd/script.ts routedScriptKey): stable across
  // restarts and the same on every node (the secret key is), unknown to clients of the functions port.
  const routeKey = secretBox.deriveKey('functions route key').toString('hex');
  // The accounts' data engines (workerd's bundled KV and D1 engines, one process per account), and Workers KV
  // and D1 on them.
  // Several nodes (PostgreSQL and blobs on S3): each account's engines process is one instance of a workerd
  // cluster, whose shared state Ledge's own storage engine serves it over S3 on loopback (s3/cluster-store.ts).
  const clusterStore =
    cluster.shared && config.s3
      ? new ClusterStore({
          storage,
          secret: secretBox.deriveKey('workerd cluster store'),
          httpTimeouts: config.httpTimeouts,
          logger,
          clock,
        })
      : undefined;
  // The same for the scripts that host Durable Objects: each is a cluster of its own in its account's place.
  const workerdCluster: EnginesClusterSettings | undefined = clusterStore && {
    bucketFor: (accountId) => clusterStore.bucketFor(accountId),
    key: secretBox.deriveKey('workerd cluster key').toString('hex'),
    host: config.cluster.address,
    stopTimeoutMs: config.cluster.stopTimeoutMs,
    timeDivisor: config.cluster.timeDivisor,
  };
  const engines = new EngineHost({
    cluster: workerdCluster,
    runtimeDir: paths.runtime,
    dataDir: join(config.dataDir, 'engines'),
    kinds: engineKinds({ d1: { maxDatabaseBytes: config.d1.maxDatabaseBytes } }),
    logger: logger.child({ component: 'engines' }),
    clock,
    accounts: async () => [...new Set([...(await kv.accounts()), ...(await d1.accounts())])],
  });
  const kv = createKvSubsystem({ db, engines, settings: config.kv, logger, clock });
  const d1 = createD1Subsystem({
    db,
    engines,
    limits: config.d1,
    transfersDir: join(config.dataDir, 'd1', 'transfers'),
    clock,
  });
  // Queues: each account's queue engine in a process of its own; consumers are scripts of the account.
  const queues = createQueuesSubsystem({
    db,
    runtimeDir: join(paths.runtime, 'queues'),
    dataDir: join(config.dataDir, 'engines'),
    logger: logger.child({ component: 'queues' }),
    clock,
    limits: config.queues,
    consumerSocket: (accountId, script) =>
      workers.functions.runtime.entrypointSocket(accountId, script, QUEUE_RELAY_ENTRYPOINT),
    reloadFunctions: async () => {
      await workers.functions.workers.reloadRuntime();
    },
    scriptExists: async (accountId, name) =>
      (await workers.functions.workers.store.getScript(accountId, name)) !== undefined,
    producers: async (accountId) => queueProducers(await workers.functions.workers.store.listDeployed(), accountId),
    workerdCluster,
    nodes: cluster.shared ? cluster : undefined,
  });
  const workers = createWorkersSubsystem({
    // Where functions are served, and the operator's egress lists their fetch() and connect() follow too.
    config: {
      routeKey,
      functionsHost: config.functionsHost,
      functionsPort: config.functionsPort,
      functionsPortSetting: SETTINGS.functionsPort,
      functionsDomain: config.functionsDomain,
      functionsProcesses: config.functionsProcesses,
      egress: config.egress,
    },
    settings: config.workers,
    db,
    secretBox,
    accounts: accounts.service,
    logger,
    paths,
    buckets: { bucketExists: async (accountId, name) => (await storage.getBucket(accountId, name)) !== undefined },
    engines: {
      socketPath: (kind, accountId) => engines.socketPath(kind, accountId),
      queueSocketPath: (accountId) => queues.engines.socketPath('queues', accountId),
    },
    kvNamespaces: { namespaceExists: (accountId, id) => kv.service.exists(accountId, id) },
    databases: { databaseExists: async (accountId, id) => (await d1.store.find(accountId, id)) !== undefined },
    queues: { queueId: async (accountId, name) => (await queues.store.find(accountId, name))?.queue_id },
    queueConsumers: () => queues.consumerScripts(),
    assetBlobs: openAssetBlobStore(config, join(config.dataDir, 'assets')),
    r2: {
      workerdService: (accountId, name) => r2.wire.workerdService(accountId, name),
      localReads: (accountId, bucketName) => r2.wire.localReads(accountId, bucketName),
      onObjectsChanged: (listener) => storage.objectChanges?.onChange(listener),
    },
    metrics,
    cluster: cluster.shared ? cluster : undefined,
    objectsCluster: workerdCluster,
    clusterObjects:
      clusterStore && new ClusterObjects({ storage, accountId: CLUSTER_STORE_ACCOUNT, bucket: CLUSTER_STORE_BUCKET }),
    clock,
    routedScripts: () => workerRoutes.store.routedScripts(),
  });
  const workerRoutes: WorkerRoutesSubsystem = createWorkerRoutesSubsystem({
    db,
    zones: {
      owningZone: (hostname) => zones.service.owningZone(hostname),
      byId: (id) => zones.service.byId(id),
      resolve: (principal, id) => zones.service.resolve(principal, id),
    },
    scriptExists: async (accountId, name) =>
      (await workers.functions.workers.store.getScript(accountId, name)) !== undefined,
    // A Custom Domain is the Worker's alone: not on a load balancer's or a public bucket's hostname.
    hostnameUse: async (hostname) => {
      const lb = await loadBalancing.service.directory.findByHostname(hostname);
      if (lb) return 'a load balancer';
      return r2.publicHosts.claims(hostname) ? 'a public bucket' : undefined;
    },
    changed: async () => {
      cluster.announce(WORKER_ROUTES_TOPIC, 'changed');
      await workers.functions.workers.reloadRuntime();
    },
    logger: logger.child({ component: 'worker-routes' }),
    clock,
  });
  // Workflows: their records here, their instances in the engine beside the Worker that runs each.
  const workflows = createWorkflowsSubsystem({
    db,
    runtime: workers.functions.runtime,
    scriptExists: async (accountId, name) =>
      (await workers.functions.workers.store.getScript(accountId, name)) !== undefined,
    clock,
  });
  // Another node's change: its table here (the runtime reloads on the runtime's own announcement).
  cluster.onRemote(WORKER_ROUTES_TOPIC, () => workerRoutes.directory.refreshSoon());
  zones.service.beforeDelete((zone) => workerRoutes.forgetZone(zone.id));
  // A deleted script consumes nothing any more.
  workers.functions.workers.onScriptDeleted((accountId, name) => queues.service.forgetScript(accountId, name));
  workers.functions.workers.onScriptDeleted(async (accountId, name) => {
    if ((await workerRoutes.store.forgetScript(accountId, name)) > 0) await workerRoutes.directory.refresh();
  });
  // With --functions-port 0 the real port is known once the runtime listens.
  egress.addOwnListener(() => workers.functions.runtime.port, 'functions');
  const tls = createTlsSubsystem({
    db,
    box: secretBox,
    zones: (principal, zoneId) => zones.service.resolve(principal, zoneId),
    settings: config.tls,
    hostnames: servedHostnames(db),
    announce: () => cluster.announce('tls_certificates', 'changed'),
    gate,
    clock,
    logger,
  });
  cluster.onRemote('tls_certificates', () => void tls.refresh().catch(() => {}));
  const traffic: TrafficListener = new TrafficListener({
    host: config.host,
    port: config.trafficPort,
    portSetting: SETTINGS.trafficPort,
    directory: loadBalancing.service.directory,
    health: loadBalancing.service.health,
    healthEvents,
    egress,
    settings: config.traffic,
    httpTimeouts: config.httpTimeouts,
    logger: logger.child({ component: 'lb-traffic' }),
    // Public buckets (managed URLs, custom domains) are served on the traffic port by Host.
    hostHandler: r2.publicHandler,
    // Workers routes and Custom Domains, before both: forwarded to the script on this node's functions port.
    functionRoutes: {
      match: (hostname, target, https) => workerRoutes.directory.table.match(hostname, target, https),
      forwardHeader: (script) => {
        const { accountId, script: name } = script as { accountId: string; script: string };
        return { name: ROUTED_SCRIPT_HEADER, value: routedScriptKey(routeKey, accountId, name) };
      },
      functionsAddress: () => {
        const port = workers.functions.runtime.port;
        return port === undefined ? undefined : { address: loopbackOf(config.functionsHost), port };
      },
    },
    plainHostHandler: (inner) => tls.plainHostHandler(inner, (): number | undefined => traffic.tlsPort),
    tls: { port: config.trafficTlsPort, portSetting: SETTINGS.trafficTlsPort, termination: tls.directory },
    clock,
  });
  egress.addOwnListener(() => traffic.tlsPort ?? (config.trafficTlsPort || undefined), 'HTTPS traffic');
  // Origins are never Ledge's own traffic port (a load balancer proxying to itself would loop).
  egress.addOwnListener(() => traffic.port ?? (config.trafficPort || undefined), 'load balancer traffic');

  // Public bucket hostnames changed on one node are reloaded on the others.
  r2.publicAccess.onChange(() => cluster.announce('r2_public_hosts', 'changed'));
  cluster.onRemote('r2_public_hosts', () => r2.publicHosts.refreshSoon());

  const s3 = createS3Subsystem({
    host: config.host,
    port: config.s3ApiPort,
    portSetting: SETTINGS.s3ApiPort,
    storage,
    accounts: accounts.service,
    tempCredentials: r2.tempCredentials,
    httpTimeouts: config.httpTimeouts,
    logger,
    clock,
  });
  const s3Api = s3.listener;
  egress.addOwnListener(() => s3Api.port ?? (config.s3ApiPort || undefined), 'S3 API');

  const subsystems: Subsystem[] = [
    accounts,
    r2,
    zones,
    loadBalancing,
    notifications,
    kv,
    d1,
    queues,
    workers,
    workerRoutes,
    workflows,
    s3,
    tls,
  ];
  const dashboard = createDashboard({
    accounts: accounts.service,
    db,
    healthEvents,
    logger,
    clock,
    accessChanges,
    endpoints: () => ({ public_port: traffic.port, s3_port: s3Api.port }),
  });
  return {
    dashboard,
    clock,
    accessChanges,
    config,
    paths,
    db,
    logger,
    metrics,
    secretBox,
    egress,
    subsystems,
    accounts: accounts.service,
    healthEvents,
    poolEnablement,
    zones: zones.service,
    workerRoutes,
    loadBalancing: loadBalancing.service,
    traffic,
    tls,
    s3Api,
    notifications: notifications.service,
    functions: workers.functions,
    engines,
    storage,
    blobStore,
    r2Backend: r2.wire,
    tempCredentials: r2.tempCredentials,
    cluster,
    ready: async () => {
      await db.get('SELECT 1 AS ok');
    },
    // The cluster first (this node is live and hears other nodes' changes before any cache fills) and the
    // traffic listener last to start and first to stop: traffic flows only while everything it steers by runs.
    // The engines before the subsystems (and stopped after them): functions bound to KV or D1 reach them as soon
    // as they serve.
    // The cluster store before the engines (they join their clusters through it) and after them on the way down
    // (a stopping instance hands its objects over through it).
    background: [
      cluster.background,
      ...(clusterStore ? [clusterStore] : []),
      engines,
      ...subsystems.flatMap((subsystem) => subsystem.background),
      traffic,
    ],
  };
}

/** Announced when one node changes Workers routes or Custom Domains: the others rebuild their tables. */
const WORKER_ROUTES_TOPIC = 'worker_routes';

/** The address this node reaches its own functions port at (a wildcard listen address is reached on loopback). */
function loopbackOf(host: string): string {
  if (host === '' || host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host.replace(/^\[(.*)\]$/, '$1');
}

/** The scripts of an account whose deployed version binds each queue (by id) as a producer. */
function queueProducers(
  deployed: readonly { script: { account_id: string; name: string }; version: { bindings: readonly Binding[] } }[],
  accountId: string,
): Map<string, string[]> {
  const producers = new Map<string, string[]>();
  for (const { script, version } of deployed) {
    if (script.account_id !== accountId) continue;
    for (const binding of version.bindings) {
      if (binding.type !== 'queue') continue;
      const scripts = producers.get(binding.queue_id) ?? [];
      if (!scripts.includes(script.name)) scripts.push(script.name);
      producers.set(binding.queue_id, scripts);
    }
  }
  return producers;
}
