import { availableParallelism } from 'node:os';
import {
  DEFAULT_API_PORT,
  DEFAULT_FUNCTIONS_PORT,
  DEFAULT_S3_API_PORT,
  DEFAULT_TRAFFIC_PORT,
  DEFAULT_TRAFFIC_TLS_PORT,
} from '../../shared/default-ports.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../shared/http-timeouts.ts';
import { LOG_FORMATS, LOG_LEVELS } from '../../shared/logger.ts';
import { base64Key, boolean, cidrList, hostname, integer, matching, oneOf, port, serviceUrl, text } from './kinds.ts';
import { optional, withDefault } from './setting.ts';

const MiB = 1024 * 1024;
const DAY_SECONDS = 86_400;

/**
 * Every setting of `ledge server`, declared once: its flag (when it has one), its environment variable,
 * its type and range, its default and one line on what it does. The server parses them once at start
 * (parse.ts) and hands each subsystem its typed part (../config.ts); `ledge server --help` and
 * docs/configuration.md (scripts/configuration-doc.ts) are written from this table. The key of a setting
 * with a flag is the flag in camelCase, as commander names the option.
 */
export const SETTINGS = {
  // Server: where it keeps its data and where it listens.
  dataDir: withDefault({
    flag: '--data-dir',
    env: 'LEDGE_DATA_DIR',
    kind: text('dir', 'a directory'),
    default: '.ledge',
    description: 'Data directory: the SQLite file, blobs, keys, logs and the runtime files.',
    section: 'Server',
  }),
  host: withDefault({
    flag: '--host',
    env: 'LEDGE_HOST',
    kind: text('host', 'an address'),
    default: '127.0.0.1',
    description: 'Address the API, the traffic port and the S3 API listen on.',
    section: 'Server',
  }),
  port: withDefault({
    flag: '--port',
    env: 'LEDGE_PORT',
    kind: port(),
    default: DEFAULT_API_PORT,
    description: 'Port of the /client/v4 API and the dashboard.',
    label: 'port',
    section: 'Server',
  }),
  functionsPort: withDefault({
    flag: '--functions-port',
    env: 'LEDGE_FUNCTIONS_PORT',
    kind: port(),
    default: DEFAULT_FUNCTIONS_PORT,
    description: 'Port that serves deployed functions.',
    label: 'port',
    section: 'Server',
  }),
  trafficPort: withDefault({
    flag: '--traffic-port',
    env: 'LEDGE_TRAFFIC_PORT',
    kind: port(),
    default: DEFAULT_TRAFFIC_PORT,
    description: 'Port where load balancers and public buckets take traffic, routed by Host.',
    label: 'port',
    section: 'Server',
  }),
  trafficTlsPort: withDefault({
    flag: '--traffic-tls-port',
    env: 'LEDGE_TRAFFIC_TLS_PORT',
    kind: port(),
    default: DEFAULT_TRAFFIC_TLS_PORT,
    description: "Port where the traffic port's hostnames are served over HTTPS (HTTP/2 and HTTP/1.1).",
    label: 'port',
    section: 'Server',
  }),
  acmeDirectoryUrl: optional({
    env: 'LEDGE_ACME_DIRECTORY_URL',
    kind: text('url', 'https://acme-v02.api.letsencrypt.org/directory'),
    description: 'ACME directory certificates are ordered from for the hostnames the traffic port serves.',
    unsetText: 'no certificates are ordered (uploaded ones are served)',
    section: 'HTTPS',
  }),
  acmeEmail: optional({
    env: 'LEDGE_ACME_EMAIL',
    kind: text('email'),
    description: 'Contact address of the ACME account.',
    unsetText: 'none',
    section: 'HTTPS',
  }),
  acmeChallenge: withDefault({
    env: 'LEDGE_ACME_CHALLENGE',
    kind: oneOf(['http-01', 'tls-alpn-01'] as const),
    default: 'http-01',
    description:
      'How the CA checks a name: HTTP-01 on the traffic port (80 for a public CA), TLS-ALPN-01 on the TLS port (443).',
    section: 'HTTPS',
  }),
  acmeCaFile: optional({
    env: 'LEDGE_ACME_CA_FILE',
    kind: text('file', 'a PEM file'),
    description: "CAs trusted for the ACME directory's own HTTPS (a private CA).",
    unsetText: "the system's",
    section: 'HTTPS',
  }),
  acmeIntervalMs: withDefault({
    env: 'LEDGE_ACME_INTERVAL_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: 3_600_000,
    description: 'How often the served hostnames are checked for certificates to order or renew.',
    section: 'HTTPS',
  }),
  acmeRetryMs: withDefault({
    env: 'LEDGE_ACME_RETRY_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: 60_000,
    description: 'First retry of a failed order; doubled after each failure, at most 6 hours.',
    section: 'HTTPS',
  }),
  s3ApiPort: withDefault({
    flag: '--s3-api-port',
    env: 'LEDGE_S3_API_PORT',
    kind: port(),
    default: DEFAULT_S3_API_PORT,
    description: 'Port of the S3 API (R2-compatible); unrelated to the --s3-* blob settings.',
    label: 'port',
    section: 'Server',
  }),
  metricsToken: optional({
    flag: '--metrics-token',
    env: 'LEDGE_METRICS_TOKEN',
    kind: text('token'),
    description: 'Enables GET /metrics (Prometheus) for clients sending Authorization: Bearer <token>.',
    unsetText: '/metrics refuses (403)',
    section: 'Server',
    secret: true,
  }),
  smtpUrl: optional({
    flag: '--smtp-url',
    env: 'LEDGE_SMTP_URL',
    kind: text('url', 'smtp://user:pass@host:port'),
    description: 'SMTP server for outgoing mail.',
    unsetText: 'mail goes to the local outbox (`ledge mail`)',
    section: 'Server',
  }),

  // Records and keys.
  databaseUrl: optional({
    flag: '--database-url',
    env: 'LEDGE_DATABASE_URL',
    kind: text('url', 'postgres://user:password@host:port/db'),
    description: 'Keep records in PostgreSQL (several nodes may share it).',
    unsetText: 'SQLite in the data dir',
    section: 'Records and keys',
  }),
  secretKey: optional({
    env: 'LEDGE_SECRET_KEY',
    kind: base64Key(32),
    description: 'Key that encrypts secrets at rest; every node sharing a database needs the same one.',
    unsetText: '<data-dir>/secret.key, made on first start',
    section: 'Records and keys',
    secret: true,
  }),
  nodeId: optional({
    env: 'LEDGE_NODE_ID',
    kind: matching(/^[A-Za-z0-9._-]{1,64}$/, '1 to 64 letters, digits, dots, dashes or underscores', 'id'),
    description: "This node's name among the nodes sharing the database.",
    unsetText: 'made once per data dir',
    section: 'Nodes',
  }),
  clusterHeartbeatMs: withDefault({
    env: 'LEDGE_CLUSTER_HEARTBEAT_MS',
    kind: integer(1, 3_600_000, 'milliseconds'),
    default: 5_000,
    description: 'How often a node beats; a node is dead after two missed beats.',
    section: 'Nodes',
  }),
  clusterAddress: withDefault({
    env: 'LEDGE_CLUSTER_ADDRESS',
    kind: hostname('10.0.0.5'),
    default: '127.0.0.1',
    description:
      "Private address other nodes reach this node's workerd cluster instances at (KV, D1, Durable Objects on several nodes; each on a port of its own). Their traffic is authenticated, not encrypted: a private network only.",
    section: 'Nodes',
  }),
  clusterStopTimeoutMs: withDefault({
    env: 'LEDGE_CLUSTER_STOP_TIMEOUT_MS',
    kind: integer(1_000, 600_000, 'milliseconds'),
    default: 8_000,
    description:
      'On several nodes, how long a stopping node has to hand its KV namespaces, D1 databases and Durable Objects to the others.',
    section: 'Nodes',
  }),
  clusterTimeDivisor: withDefault({
    env: 'LEDGE_CLUSTER_UNSAFE_TIME_DIVISOR',
    kind: integer(1, 1_000),
    default: 1,
    description:
      "Tests only: divides workerd's cluster lease (20 s) and takeover waits by this; above 1 a slow bucket request fences an instance.",
    section: 'Nodes',
  }),

  // Blobs on an S3-compatible service.
  s3Endpoint: optional({
    flag: '--s3-endpoint',
    env: 'LEDGE_S3_ENDPOINT',
    kind: serviceUrl(),
    description: 'Keep blobs on an S3-compatible service at this URL (needs a bucket).',
    unsetText: 'AWS when only a bucket is set; files in the data dir when neither is',
    section: 'Blobs on S3',
  }),
  s3Bucket: optional({
    flag: '--s3-bucket',
    env: 'LEDGE_S3_BUCKET',
    kind: text('name', 'a bucket name'),
    description: 'Bucket for blobs, created if missing; setting it puts blobs on S3.',
    unsetText: 'blobs are files in the data dir',
    section: 'Blobs on S3',
  }),
  s3Region: withDefault({
    flag: '--s3-region',
    env: 'LEDGE_S3_REGION',
    kind: text('region'),
    default: 'us-east-1',
    description: 'Region of the S3 service.',
    section: 'Blobs on S3',
  }),
  s3ForcePathStyle: withDefault({
    flag: '--s3-force-path-style',
    env: 'LEDGE_S3_FORCE_PATH_STYLE',
    kind: boolean(),
    default: false,
    description: 'Address the bucket as <endpoint>/<bucket>, for MinIO, Ceph and Swift.',
    section: 'Blobs on S3',
  }),
  s3Prefix: withDefault({
    flag: '--s3-prefix',
    env: 'LEDGE_S3_PREFIX',
    kind: text('prefix'),
    default: '',
    description: 'Prefix of every blob key in the bucket (`ledge` means `ledge/`).',
    section: 'Blobs on S3',
  }),
  s3AccessKeyId: optional({
    env: 'LEDGE_S3_ACCESS_KEY_ID',
    alsoEnv: ['AWS_ACCESS_KEY_ID'],
    kind: text('key'),
    description: 'Access key of the blob store (with the secret key; never a flag, so no process list shows it).',
    unsetText: "the AWS SDK's own chain (instance roles, ...)",
    section: 'Blobs on S3',
    secret: true,
  }),
  s3SecretAccessKey: optional({
    env: 'LEDGE_S3_SECRET_ACCESS_KEY',
    alsoEnv: ['AWS_SECRET_ACCESS_KEY'],
    kind: text('key'),
    description: 'Secret key of the blob store (with the access key).',
    unsetText: "the AWS SDK's own chain",
    section: 'Blobs on S3',
    secret: true,
  }),

  // First start.
  bootstrapEmail: optional({
    env: 'LEDGE_BOOTSTRAP_EMAIL',
    kind: text('email'),
    description: "The first user's email, on the first start of an empty data dir.",
    unsetText: 'admin@ledge.localhost',
    section: 'First start',
  }),
  bootstrapApiKey: optional({
    env: 'LEDGE_BOOTSTRAP_API_KEY',
    kind: text('key'),
    description: "The first user's global API key (first start only).",
    unsetText: 'made at random',
    section: 'First start',
    secret: true,
  }),
  bootstrapApiToken: optional({
    env: 'LEDGE_BOOTSTRAP_API_TOKEN',
    kind: text('token'),
    description: 'The first API token (first start only).',
    unsetText: 'made at random',
    section: 'First start',
    secret: true,
  }),
  bootstrapAccountId: optional({
    env: 'LEDGE_BOOTSTRAP_ACCOUNT_ID',
    kind: text('id'),
    description: "The first account's id (first start only).",
    unsetText: 'made at random',
    section: 'First start',
  }),

  // The HTTP servers (API, S3 API, traffic port): how long they wait on slow or idle clients.
  httpHeadersTimeoutMs: withDefault({
    env: 'LEDGE_HTTP_HEADERS_TIMEOUT_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: DEFAULT_HTTP_TIMEOUTS.headersMs,
    description: 'Time a client has to send the request line and headers (at most the request timeout).',
    section: 'HTTP servers',
  }),
  httpRequestTimeoutMs: withDefault({
    env: 'LEDGE_HTTP_REQUEST_TIMEOUT_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: DEFAULT_HTTP_TIMEOUTS.requestMs,
    description: 'Time a whole request may take (a 5 GiB upload at 0.75 MiB/s fits in the default).',
    section: 'HTTP servers',
  }),
  httpIdleTimeoutMs: withDefault({
    env: 'LEDGE_HTTP_IDLE_TIMEOUT_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: DEFAULT_HTTP_TIMEOUTS.idleMs,
    description: 'No byte either way for this long closes a connection mid-request.',
    section: 'HTTP servers',
  }),
  httpKeepaliveTimeoutMs: withDefault({
    env: 'LEDGE_HTTP_KEEPALIVE_TIMEOUT_MS',
    kind: integer(100, 86_400_000, 'milliseconds'),
    default: DEFAULT_HTTP_TIMEOUTS.keepAliveMs,
    description: 'How long an idle kept-alive connection stays open.',
    section: 'HTTP servers',
  }),

  // Egress.
  egressAllow: withDefault({
    flag: '--egress-allow',
    env: 'LEDGE_EGRESS_ALLOW',
    kind: cidrList(),
    default: [],
    description: 'CIDRs monitors, previews, webhooks and functions may reach (see docs/security.md).',
    section: 'Egress',
  }),
  egressDeny: withDefault({
    flag: '--egress-deny',
    env: 'LEDGE_EGRESS_DENY',
    kind: cidrList(),
    default: [],
    description: 'CIDRs they may not reach, e.g. 127.0.0.0/8,10.0.0.0/8.',
    section: 'Egress',
  }),

  // Functions.
  functionsDomain: withDefault({
    flag: '--functions-domain',
    env: 'LEDGE_FUNCTIONS_DOMAIN',
    kind: text('domain', 'a domain'),
    default: 'localhost',
    description: 'Functions answer at <script>.<subdomain>.<domain>.',
    section: 'Functions',
  }),
  functionsHost: withDefault({
    env: 'LEDGE_FUNCTIONS_HOST',
    kind: text('host', 'an address'),
    default: '127.0.0.1',
    description: 'Address the functions port listens on.',
    section: 'Functions',
  }),
  functionsProcesses: withDefault({
    flag: '--functions-processes',
    env: 'LEDGE_FUNCTIONS_PROCESSES',
    kind: integer(1, 64),
    default: { compute: () => Math.min(availableParallelism(), 4), text: 'CPUs, at most 4' },
    description: 'workerd processes serving functions, each on one core.',
    label: 'number of functions processes',
    section: 'Functions',
  }),
  functionsStartTimeoutMs: withDefault({
    env: 'LEDGE_FUNCTIONS_START_TIMEOUT_MS',
    kind: integer(1, 600_000, 'milliseconds'),
    default: 15_000,
    description: "How long a script's process may take to load it.",
    section: 'Functions',
  }),
  subrequestsPerInvocation: withDefault({
    env: 'LEDGE_SUBREQUESTS_PER_INVOCATION',
    kind: integer(1, 10_000_000),
    // Cloudflare's (developers.cloudflare.com/workers/platform/limits).
    default: 10_000,
    description: 'fetch() calls one invocation may make.',
    section: 'Functions',
  }),
  maxScriptsPerAccount: withDefault({
    env: 'LEDGE_MAX_SCRIPTS_PER_ACCOUNT',
    kind: integer(1, 1_000_000),
    // "Number of Workers: 500" on paid plans; each runs in a process of its own here.
    default: 500,
    description: 'Workers one account may have (each runs in a workerd process of its own).',
    section: 'Functions',
  }),
  maxKvNamespacesPerAccount: withDefault({
    env: 'LEDGE_MAX_KV_NAMESPACES_PER_ACCOUNT',
    kind: integer(1, 1_000_000),
    // Workers KV's "Namespaces per account: 1,000" (developers.cloudflare.com/kv/platform/limits).
    default: 1000,
    description: 'Workers KV namespaces one account may have.',
    section: 'Functions',
  }),
  scriptUploadLimit: withDefault({
    env: 'LEDGE_SCRIPT_UPLOAD_LIMIT',
    kind: integer(64 * 1024, 64 * MiB, 'bytes'),
    default: 10 * MiB,
    description: 'Largest script upload (the whole multipart body); Cloudflare documents 10 MB.',
    section: 'Functions',
  }),
  tailSessionSeconds: withDefault({
    env: 'LEDGE_TAIL_SESSION_SECONDS',
    kind: integer(1, 7 * DAY_SECONDS, 'seconds'),
    default: 6 * 3600,
    description: 'How long a `wrangler tail` session lives (6 hours, as on Cloudflare).',
    section: 'Functions',
  }),
  d1MaxDatabasesPerAccount: withDefault({
    env: 'LEDGE_D1_MAX_DATABASES_PER_ACCOUNT',
    kind: integer(1, 1_000_000),
    // Cloudflare's Workers Paid plan: 50,000 databases per account (10 on Free).
    default: 50_000,
    description: 'D1 databases one account may have (Cloudflare answers 7406 past it).',
    section: 'Functions',
  }),
  durableObjectMaxBytes: withDefault({
    env: 'LEDGE_DURABLE_OBJECT_MAX_BYTES',
    kind: integer(64 * 1024, 1024 * 1024 * MiB, 'bytes'),
    // Cloudflare's storage per SQLite-backed Durable Object: 10 GB (key-value backed ones have no such limit).
    default: 10 * 1024 * MiB,
    description: 'Size past which a SQLite-backed Durable Object takes reads and deletes but no more writes.',
    section: 'Functions',
  }),
  d1MaxDatabaseBytes: withDefault({
    env: 'LEDGE_D1_MAX_DATABASE_BYTES',
    kind: integer(64 * 1024, 1024 * 1024 * MiB, 'bytes'),
    // Cloudflare's Workers Paid plan: 10 GB per database (500 MB on Free).
    default: 10 * 1024 * MiB,
    description: 'Size past which a D1 database takes reads and deletes but no more writes.',
    section: 'Functions',
  }),
  queuesMaxPerAccount: withDefault({
    env: 'LEDGE_QUEUES_MAX_PER_ACCOUNT',
    kind: integer(1, 1_000_000),
    // Cloudflare's Workers Paid plan: 10,000 queues per account.
    default: 10_000,
    description: 'Queues one account may have (10,000 on the Workers Paid plan); past it a create answers 11010.',
    section: 'Functions',
  }),

  // R2.
  r2PublicDomain: withDefault({
    env: 'LEDGE_R2_PUBLIC_DOMAIN',
    kind: hostname('r2.localhost'),
    default: 'r2.localhost',
    description: 'Suffix of managed public bucket URLs (every *.localhost name resolves to loopback).',
    section: 'R2',
  }),
  r2LifecycleIntervalMs: withDefault({
    env: 'LEDGE_R2_LIFECYCLE_INTERVAL_MS',
    kind: integer(1, undefined, 'milliseconds'),
    default: 3_600_000,
    description: 'How often object lifecycle rules are applied (R2 applies them within a day).',
    section: 'R2',
  }),

  // Load balancing.
  lbMinInterval: withDefault({
    env: 'LEDGE_LB_MIN_INTERVAL',
    kind: integer(1, 3600, 'seconds'),
    default: 5,
    description: 'Smallest monitor interval accepted (5 as on paid plans).',
    section: 'Load balancing',
  }),
  lbConnectTimeoutMs: withDefault({
    env: 'LEDGE_LB_CONNECT_TIMEOUT_MS',
    kind: integer(50, 3_600_000, 'milliseconds'),
    default: 10_000,
    description: 'Connecting to an origin; then 522, or a retry on another origin.',
    section: 'Load balancing',
  }),
  lbResponseTimeoutMs: withDefault({
    env: 'LEDGE_LB_RESPONSE_TIMEOUT_MS',
    kind: integer(50, 3_600_000, 'milliseconds'),
    default: 100_000,
    description: "From sending a request to an origin to its response headers; then 524 (Cloudflare's 100 s).",
    section: 'Load balancing',
  }),
  lbIdleTimeoutMs: withDefault({
    env: 'LEDGE_LB_IDLE_TIMEOUT_MS',
    kind: integer(50, 3_600_000, 'milliseconds'),
    default: 120_000,
    description: 'No byte either way on an origin connection mid-response.',
    section: 'Load balancing',
  }),

  // Notifications.
  notifyDeprecationInterval: withDefault({
    env: 'LEDGE_NOTIFY_DEPRECATION_INTERVAL',
    kind: integer(0, undefined, 'seconds'),
    default: DAY_SECONDS,
    description: 'Time between deprecation notices (legacy notification_email) per address.',
    section: 'Notifications',
  }),
  notifyRetryBaseMs: withDefault({
    env: 'LEDGE_NOTIFY_RETRY_BASE_MS',
    kind: integer(1, undefined, 'milliseconds'),
    default: 1_000,
    description: 'First back-off of a failed delivery (doubling up to the maximum).',
    section: 'Notifications',
  }),
  notifyRetryMaxMs: withDefault({
    env: 'LEDGE_NOTIFY_RETRY_MAX_MS',
    kind: integer(1, undefined, 'milliseconds'),
    default: 60_000,
    description: 'Longest back-off between attempts of a delivery.',
    section: 'Notifications',
  }),
  notifyGiveUpAfter: withDefault({
    env: 'LEDGE_NOTIFY_GIVE_UP_AFTER',
    kind: integer(1, undefined, 'seconds'),
    default: DAY_SECONDS,
    description: 'How long a delivery is retried before it is given up.',
    section: 'Notifications',
  }),
  notifyWebhookTimeoutMs: withDefault({
    env: 'LEDGE_NOTIFY_WEBHOOK_TIMEOUT_MS',
    kind: integer(1, undefined, 'milliseconds'),
    default: 5_000,
    description: 'Per phase of a webhook send: connect, headers, each body chunk.',
    section: 'Notifications',
  }),
  notifyWebhookDeadlineMs: withDefault({
    env: 'LEDGE_NOTIFY_WEBHOOK_DEADLINE_MS',
    kind: integer(1, undefined, 'milliseconds'),
    default: 10_000,
    description: 'Total time of one webhook send, test messages included.',
    section: 'Notifications',
  }),
  notifyHistoryDays: withDefault({
    env: 'LEDGE_NOTIFY_HISTORY_DAYS',
    kind: integer(1, undefined, 'days'),
    default: 30,
    description: 'Days of delivery history kept and shown (30 as on Cloudflare).',
    section: 'Notifications',
  }),
  notifyLeaseMs: withDefault({
    env: 'LEDGE_NOTIFY_LEASE_MS',
    kind: integer(1_000, undefined, 'milliseconds'),
    default: 120_000,
    description: "How long a claimed delivery is its node's (longer than any send's deadline).",
    section: 'Notifications',
  }),
  notifyPollMs: withDefault({
    env: 'LEDGE_NOTIFY_POLL_MS',
    kind: integer(100, undefined, 'milliseconds'),
    default: 5_000,
    description: 'With several nodes: how often each looks for deliveries whose lease ran out.',
    section: 'Notifications',
  }),

  // Logs.
  logLevel: withDefault({
    env: 'LEDGE_LOG_LEVEL',
    kind: oneOf(LOG_LEVELS),
    default: 'info',
    description: 'Threshold of the log records written on stderr.',
    label: 'log level',
    section: 'Logs',
  }),
  logFormat: withDefault({
    flag: '--log-format',
    env: 'LEDGE_LOG_FORMAT',
    kind: oneOf(LOG_FORMATS),
    default: 'text',
    description: 'Log records on stderr: a readable line each (text) or one JSON object per line (json).',
    label: 'log format',
    section: 'Logs',
  }),
};

export type SettingKey = keyof typeof SETTINGS;
