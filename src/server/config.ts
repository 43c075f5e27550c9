import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import {
  DEFAULT_API_PORT,
  DEFAULT_FUNCTIONS_PORT,
  DEFAULT_S3_API_PORT,
  DEFAULT_TRAFFIC_PORT,
} from '../shared/default-ports.ts';
import { resolveEgressSettings, type EgressSettings } from '../egress/index.ts';
import { parseLogFormat, parseLogLevel, type LogFormat, type LogLevel } from '../shared/logger.ts';
import type { S3Settings } from '../storage/index.ts';
import { resolveS3Settings, type S3Flags } from './s3-config.ts';

export interface BootstrapValues {
  email?: string | undefined;
  apiKey?: string | undefined;
  apiToken?: string | undefined;
  accountId?: string | undefined;
}

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
  /** The S3 API (`--s3-api-port`; the `--s3-*` blob settings are another thing); 0 = free port. */
  s3ApiPort: number;
  /** CIDRs monitors, previews and webhooks may (allow) or may not (deny) reach; see src/egress/policy.ts. */
  egress: EgressSettings;
  /**
   * The environment this configuration was resolved from. Subsystems read their own tunables from it
   * (LEDGE_LB_MIN_INTERVAL, LEDGE_NOTIFY_*), never from process.env directly, so an embedding
   * process or a test sets them in one place.
   */
  env: NodeJS.ProcessEnv;
}

export interface ServerFlags extends S3Flags {
  dataDir?: string | undefined;
  databaseUrl?: string | undefined;
  host?: string | undefined;
  port?: string | number | undefined;
  smtpUrl?: string | undefined;
  functionsPort?: string | number | undefined;
  functionsDomain?: string | undefined;
  functionsProcesses?: string | number | undefined;
  trafficPort?: string | number | undefined;
  s3ApiPort?: string | number | undefined;
  egressAllow?: string | undefined;
  egressDeny?: string | undefined;
  logFormat?: string | undefined;
  metricsToken?: string | undefined;
}

export { DEFAULT_API_PORT, DEFAULT_FUNCTIONS_PORT, DEFAULT_TRAFFIC_PORT } from '../shared/default-ports.ts';

/** Flags win over environment variables, which win over the embedded defaults. */
export function resolveServerConfig(flags: ServerFlags = {}, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const config = resolveFields(flags, env);
  // Caught here: the functions runtime would otherwise report its own API port as taken by "another process".
  if (config.port !== 0 && config.port === config.functionsPort) {
    throw new Error(
      `the API and functions ports must differ (both are ${config.port}): use --port or --functions-port`,
    );
  }
  for (const [other, flag] of [
    [config.port, '--port'],
    [config.functionsPort, '--functions-port'],
  ] as const) {
    if (config.trafficPort !== 0 && config.trafficPort === other) {
      throw new Error(
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
      throw new Error(`the S3 API port must differ from the others (${other} is taken): use --s3-api-port or ${flag}`);
    }
  }
  return config;
}

function resolveFields(flags: ServerFlags, env: NodeJS.ProcessEnv): ServerConfig {
  return {
    dataDir: resolve(flags.dataDir ?? env['LEDGE_DATA_DIR'] ?? '.ledge'),
    databaseUrl: nonEmpty(flags.databaseUrl ?? env['LEDGE_DATABASE_URL']),
    nodeId: nonEmpty(env['LEDGE_NODE_ID']),
    s3: resolveS3Settings(flags, env),
    host: flags.host ?? env['LEDGE_HOST'] ?? '127.0.0.1',
    port: toPort(flags.port ?? env['LEDGE_PORT'], DEFAULT_API_PORT),
    logLevel: parseLogLevel(env['LEDGE_LOG_LEVEL'], 'info'),
    logFormat: parseLogFormat(flags.logFormat ?? env['LEDGE_LOG_FORMAT'], 'text'),
    bootstrap: {
      email: nonEmpty(env['LEDGE_BOOTSTRAP_EMAIL']),
      apiKey: nonEmpty(env['LEDGE_BOOTSTRAP_API_KEY']),
      apiToken: nonEmpty(env['LEDGE_BOOTSTRAP_API_TOKEN']),
      accountId: nonEmpty(env['LEDGE_BOOTSTRAP_ACCOUNT_ID']),
    },
    secretKey: env['LEDGE_SECRET_KEY'],
    smtpUrl: flags.smtpUrl ?? env['LEDGE_SMTP_URL'],
    functionsHost: env['LEDGE_FUNCTIONS_HOST'] ?? '127.0.0.1',
    functionsPort: toPort(flags.functionsPort ?? env['LEDGE_FUNCTIONS_PORT'], DEFAULT_FUNCTIONS_PORT),
    functionsDomain: flags.functionsDomain ?? env['LEDGE_FUNCTIONS_DOMAIN'] ?? 'localhost',
    functionsProcesses: toCount(
      flags.functionsProcesses ?? env['LEDGE_FUNCTIONS_PROCESSES'],
      Math.min(availableParallelism(), 4),
    ),
    metricsToken: nonEmpty(flags.metricsToken ?? env['LEDGE_METRICS_TOKEN']),
    trafficPort: toPort(flags.trafficPort ?? env['LEDGE_TRAFFIC_PORT'], DEFAULT_TRAFFIC_PORT),
    s3ApiPort: toPort(flags.s3ApiPort ?? env['LEDGE_S3_API_PORT'], DEFAULT_S3_API_PORT),
    egress: resolveEgressSettings({ allow: flags.egressAllow, deny: flags.egressDeny }, env),
    env,
  };
}

/** An empty variable (`FOO=`) means unset, as shells and CI files often leave them. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function toCount(value: string | number | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 64) {
    throw new Error(`invalid number of functions processes: ${value} (use 1 to 64)`);
  }
  return count;
}

function toPort(value: string | number | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${value}`);
  return port;
}
