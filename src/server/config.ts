import type { TlsSettings } from '../tls/index.ts';
import { resolve } from 'node:path';
import type { EgressSettings } from '../egress/index.ts';
import type { LoadBalancingSettings } from '../load-balancing/index.ts';
import type { TrafficSettings } from '../load-balancing/traffic/index.ts';
import type { NotificationSettings } from '../notifications/index.ts';
import type { HttpTimeouts } from '../shared/http-timeouts.ts';
import type { LogFormat, LogLevel } from '../shared/logger.ts';
import type { S3Settings } from '../storage/index.ts';
import type { WorkersSettings } from '../workers/index.ts';
import type { KvSettings } from '../kv/index.ts';
import { s3Settings } from './s3-config.ts';
import { parseSettings, SettingError, type ServerFlags, type Settings } from './settings/index.ts';

export type { ServerFlags } from './settings/index.ts';

export interface BootstrapValues {
  email?: string | undefined;
  apiKey?: string | undefined;
  apiToken?: string | undefined;
  accountId?: string | undefined;
}

/**
 * One running server's configuration: every setting of settings/schema.ts, parsed once, and grouped into
 * the typed part each subsystem is handed (no subsystem reads the environment).
 */
export interface ServerConfig {
  dataDir: string;
  /**
   * postgres://user:password@host:port/db to keep every record in PostgreSQL (several nodes may share it);
   * unset: the embedded SQLite file in the data dir.
   */
  databaseUrl?: string | undefined;
  /** This node's name among nodes sharing the database (LEDGE_NODE_ID); by default made once per data dir. */
  nodeId?: string | undefined;
  /**
   * Blobs (object bodies over 64 KiB, multipart parts) on an S3-compatible service (--s3-endpoint,
   * --s3-bucket, ...; see s3-config.ts); unset: files in `<data-dir>/blobs`.
   */
  s3?: S3Settings | undefined;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  logLevel: LogLevel;
  /** `text` (a readable line per record, the default) or `json` (one object per line). */
  logFormat: LogFormat;
  /** Values that make the first-boot credentials deterministic (LEDGE_BOOTSTRAP_*). */
  bootstrap: BootstrapValues;
  /** 32-byte key (base64) for secrets at rest; otherwise `<data-dir>/secret.key` is used or created. */
  secretKey?: string | undefined;
  /** SMTP server for outgoing mail (smtp://user:pass@host:port); without it mail goes to the local outbox. */
  smtpUrl?: string | undefined;
  /** Where deployed functions are served: http://<script>.<subdomain>.<functionsDomain>:<functionsPort>. */
  functionsHost: string;
  functionsPort: number;
  functionsDomain: string;
  /** workerd processes per generation (each runs JavaScript on one core); default: CPUs, at most 4. */
  functionsProcesses: number;
  /** Bearer token that GET /metrics requires; without one /metrics refuses (403). */
  metricsToken?: string | undefined;
  /** Load balancer traffic (the data plane): requests proxied by Host to a load balancer's origins; 0 = free port. */
  trafficPort: number;
  /** HTTPS for the traffic port's hostnames (`--traffic-tls-port`); 0 = free port. */
  trafficTlsPort: number;
  /** Certificates: ACME ordering (src/tls/). */
  tls: TlsSettings;
  /** The S3 API (`--s3-api-port`; the `--s3-*` blob settings are another thing); 0 = free port. */
  s3ApiPort: number;
  /** CIDRs monitors, previews and webhooks may (allow) or may not (deny) reach; see src/egress/policy.ts. */
  egress: EgressSettings;
  /** How long the HTTP servers (API, S3 API, traffic port) wait on slow or idle clients. */
  httpTimeouts: HttpTimeouts;
  /**
   * Several nodes: heartbeats, and how this node's workerd cluster instances (the data engines' processes) are
   * reached, stop and time their leases.
   */
  cluster: { heartbeatMs: number; address: string; stopTimeoutMs: number; timeDivisor: number };
  r2: { publicDomain: string; lifecycleIntervalMs: number };
  loadBalancing: LoadBalancingSettings;
  /** The load balancers' data plane: origin timeouts. */
  traffic: TrafficSettings;
  notifications: NotificationSettings;
  workers: WorkersSettings;
  /** D1's per-account limits (Cloudflare's codes past them). */
  d1: { maxDatabasesPerAccount: number; maxDatabaseBytes: number };
  /** Queues' per-account limit (Cloudflare's code past it). */
  queues: { maxQueuesPerAccount: number };
  kv: KvSettings;
}

/** Flags win over environment variables, which win over the defaults (settings/schema.ts). */
export function resolveServerConfig(flags: ServerFlags = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const config = fromSettings(parseSettings(flags, env));
  // Caught here: the functions runtime would otherwise report its own API port as taken by "another process".
  if (config.port !== 0 && config.port === config.functionsPort) {
    throw new SettingError(
      `the API and functions ports must differ (both are ${config.port}): use --port or --functions-port`,
    );
  }
  for (const [other, flag] of [
    [config.port, '--port'],
    [config.functionsPort, '--functions-port'],
  ] as const) {
    if (config.trafficPort !== 0 && config.trafficPort === other) {
      throw new SettingError(
        `the load balancer traffic port must differ from the others (${other} is taken): use --traffic-port or ${flag}`,
      );
    }
  }
  for (const [other, flag] of [
    [config.port, '--port'],
    [config.functionsPort, '--functions-port'],
    [config.trafficPort, '--traffic-port'],
  ] as const) {
    if (config.s3ApiPort !== 0 && config.s3ApiPort === other) {
      throw new SettingError(
        `the S3 API port must differ from the others (${other} is taken): use --s3-api-port or ${flag}`,
      );
    }
  }
  for (const [other, flag] of [
    [config.port, '--port'],
    [config.functionsPort, '--functions-port'],
    [config.trafficPort, '--traffic-port'],
    [config.s3ApiPort, '--s3-api-port'],
  ] as const) {
    if (config.trafficTlsPort !== 0 && config.trafficTlsPort === other) {
      throw new SettingError(
        `the traffic TLS port must differ from the others (${other} is taken): use --traffic-tls-port or ${flag}`,
      );
    }
  }
  return config;
}

function fromSettings(s: Settings): ServerConfig {
  return {
    dataDir: resolve(s.dataDir),
    databaseUrl: s.databaseUrl,
    nodeId: s.nodeId,
    s3: s3Settings(s),
    host: s.host,
    port: s.port,
    logLevel: s.logLevel,
    logFormat: s.logFormat,
    bootstrap: {
      email: s.bootstrapEmail,
      apiKey: s.bootstrapApiKey,
      apiToken: s.bootstrapApiToken,
      accountId: s.bootstrapAccountId,
    },
    secretKey: s.secretKey,
    smtpUrl: s.smtpUrl,
    functionsHost: s.functionsHost,
    functionsPort: s.functionsPort,
    functionsDomain: s.functionsDomain,
    functionsProcesses: s.functionsProcesses,
    metricsToken: s.metricsToken,
    trafficPort: s.trafficPort,
    trafficTlsPort: s.trafficTlsPort,
    tls: {
      directoryUrl: s.acmeDirectoryUrl,
      email: s.acmeEmail,
      challenge: s.acmeChallenge,
      directoryCaFile: s.acmeCaFile,
      intervalMs: s.acmeIntervalMs,
      retryMs: s.acmeRetryMs,
    },
    s3ApiPort: s.s3ApiPort,
    egress: { allow: s.egressAllow, deny: s.egressDeny },
    httpTimeouts: {
      // Node refuses a headers timeout above the request timeout.
      headersMs: Math.min(s.httpHeadersTimeoutMs, s.httpRequestTimeoutMs),
      requestMs: s.httpRequestTimeoutMs,
      idleMs: s.httpIdleTimeoutMs,
      keepAliveMs: s.httpKeepaliveTimeoutMs,
    },
    cluster: {
      heartbeatMs: s.clusterHeartbeatMs,
      address: s.clusterAddress,
      stopTimeoutMs: s.clusterStopTimeoutMs,
      timeDivisor: s.clusterTimeDivisor,
    },
    r2: { publicDomain: s.r2PublicDomain, lifecycleIntervalMs: s.r2LifecycleIntervalMs },
    loadBalancing: { minIntervalSeconds: s.lbMinInterval },
    traffic: {
      connectTimeoutMs: s.lbConnectTimeoutMs,
      responseTimeoutMs: s.lbResponseTimeoutMs,
      idleTimeoutMs: s.lbIdleTimeoutMs,
      maxResponseHeaderBytes: MAX_RESPONSE_HEADER_BYTES,
    },
    notifications: {
      deprecationIntervalMs: s.notifyDeprecationInterval * 1000,
      retry: {
        baseDelayMs: s.notifyRetryBaseMs,
        maxDelayMs: s.notifyRetryMaxMs,
        giveUpAfterMs: s.notifyGiveUpAfter * 1000,
      },
      webhookTimeoutMs: s.notifyWebhookTimeoutMs,
      webhookDeadlineMs: s.notifyWebhookDeadlineMs,
      historyRetentionMs: s.notifyHistoryDays * 86_400_000,
      leaseMs: s.notifyLeaseMs,
      pollMs: s.notifyPollMs,
    },
    workers: {
      startTimeoutMs: s.functionsStartTimeoutMs,
      subrequestsPerInvocation: s.subrequestsPerInvocation,
      durableObjectMaxBytes: s.durableObjectMaxBytes,
      maxScriptsPerAccount: s.maxScriptsPerAccount,
      uploadLimit: s.scriptUploadLimit,
      tailSessionSeconds: s.tailSessionSeconds,
    },
    d1: { maxDatabasesPerAccount: s.d1MaxDatabasesPerAccount, maxDatabaseBytes: s.d1MaxDatabaseBytes },
    queues: { maxQueuesPerAccount: s.queuesMaxPerAccount },
    kv: { maxNamespacesPerAccount: s.maxKvNamespacesPerAccount },
  };
}

/** Response headers above 32 KiB are refused (502), so a huge-header origin cannot grow memory; not a setting. */
const MAX_RESPONSE_HEADER_BYTES = 32 * 1024;
