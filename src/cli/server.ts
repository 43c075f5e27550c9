import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { registerRunningServer } from '../shared/server-registry.ts';
import { handler } from './context.ts';

export function registerServer(program: Command): void {
  program
    .command('server')
    .description('Run the platform: the /client/v4 API, object storage, functions, health checks and notifications')
    .option('--data-dir <dir>', 'data directory (env LEDGE_DATA_DIR)', undefined)
    .option(
      '--database-url <url>',
      'keep records in PostgreSQL, postgres://user:password@host:port/db (env LEDGE_DATABASE_URL; default: SQLite in the data dir)',
      undefined,
    )
    .option(
      '--s3-endpoint <url>',
      'keep blobs on an S3-compatible service at this URL (env LEDGE_S3_ENDPOINT; keys: LEDGE_S3_ACCESS_KEY_ID, LEDGE_S3_SECRET_ACCESS_KEY; default: files in the data dir)',
      undefined,
    )
    .option('--s3-bucket <name>', 'bucket for blobs, created if missing (env LEDGE_S3_BUCKET)', undefined)
    .option('--s3-region <region>', 'region of the S3 service (env LEDGE_S3_REGION; default us-east-1)', undefined)
    .option(
      '--s3-force-path-style',
      'address the bucket as <endpoint>/<bucket>, for MinIO, Ceph and Swift (env LEDGE_S3_FORCE_PATH_STYLE=true)',
      undefined,
    )
    .option('--s3-prefix <prefix>', 'prefix of every blob key in the bucket (env LEDGE_S3_PREFIX)', undefined)
    .option('--host <host>', 'address the API listens on (env LEDGE_HOST)', undefined)
    .option('--port <port>', 'API port, 0 for any free port (env LEDGE_PORT)', undefined)
    .option('--functions-port <port>', 'port that serves deployed functions (env LEDGE_FUNCTIONS_PORT)', undefined)
    .option(
      '--functions-domain <domain>',
      'functions answer at <script>.<subdomain>.<domain> (env LEDGE_FUNCTIONS_DOMAIN)',
      undefined,
    )
    .option(
      '--functions-processes <n>',
      'workerd processes serving functions, each on one core (env LEDGE_FUNCTIONS_PROCESSES; default: CPUs, at most 4)',
      undefined,
    )
    .option(
      '--traffic-port <port>',
      'port where load balancers take traffic, routed by Host (env LEDGE_TRAFFIC_PORT; default 8789)',
      undefined,
    )
    .option(
      '--s3-api-port <port>',
      'port of the S3 API (R2-compatible; env LEDGE_S3_API_PORT; default 8790). The --s3-* blob options are unrelated',
      undefined,
    )
    .option('--smtp-url <url>', 'send mail through this SMTP server (env LEDGE_SMTP_URL)', undefined)
    .option(
      '--egress-allow <cidrs>',
      'comma-separated CIDRs monitors, previews, webhooks and functions may reach (env LEDGE_EGRESS_ALLOW)',
      undefined,
    )
    .option(
      '--egress-deny <cidrs>',
      'comma-separated CIDRs they may not reach, e.g. 127.0.0.0/8,10.0.0.0/8 (env LEDGE_EGRESS_DENY; see docs/security.md)',
      undefined,
    )
    .option(
      '--metrics-token <token>',
      'enables GET /metrics (Prometheus) for clients sending Authorization: Bearer <token> (env LEDGE_METRICS_TOKEN)',
      undefined,
    )
    .option('--log-format <format>', 'log records on stderr: text (default) or json (env LEDGE_LOG_FORMAT)', undefined)
    .option('--json', 'print one JSON line once ready (api_url, account_id, email; credentials on first boot)')
    .action(
      handler(async (ctx) => {
        // Loaded on demand: the rest of the CLI should not pay for the whole server at start-up.
        const { forceExitIfSlow, stopRequested } = await import('../server/stop-request.ts');
        // Signal handlers first: a supervisor may send SIGTERM the moment it reads the ready line, and a
        // signal that arrives during start-up must still end in a clean shutdown (once started).
        const stop = stopRequested();
        // A closed terminal (SIGHUP) makes writes to it fail: that must not crash the shutdown.
        for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
        const { resolveServerConfig, startServer } = await import('../server/index.ts');
        const o = ctx.options as Record<string, string | undefined>;
        const config = resolveServerConfig({
          dataDir: o['dataDir'],
          databaseUrl: o['databaseUrl'],
          s3Endpoint: o['s3Endpoint'],
          s3Bucket: o['s3Bucket'],
          s3Region: o['s3Region'],
          s3ForcePathStyle: o['s3ForcePathStyle'],
          s3Prefix: o['s3Prefix'],
          host: o['host'],
          port: o['port'],
          functionsPort: o['functionsPort'],
          functionsDomain: o['functionsDomain'],
          functionsProcesses: o['functionsProcesses'],
          trafficPort: o['trafficPort'],
          s3ApiPort: o['s3ApiPort'],
          smtpUrl: o['smtpUrl'],
          egressAllow: o['egressAllow'],
          egressDeny: o['egressDeny'],
          logFormat: o['logFormat'],
          metricsToken: o['metricsToken'],
        });
        const running = await startServer(config);
        // Bundled now, in the background, so the first page view finds it ready (embedded servers bundle on
        // their first view instead); a failure is logged here and answered on that view.
        running.platform.dashboard
          .assets()
          .catch((error: unknown) => running.platform.logger.error('dashboard bundle failed', { err: error }));
        // Lets `ledge` find this server from any directory (removed when this process exits).
        registerRunningServer({ apiUrl: running.apiUrl, dataDir: config.dataDir }, config.env);
        const credentialsFile = running.platform.paths.credentials;
        const owner = await running.platform.accounts.owner();
        const summary = {
          api_url: running.apiUrl,
          dashboard_url: running.dashboardUrl,
          account_id: running.credentials?.account_id ?? owner?.account_id,
          email: running.credentials?.email ?? owner?.email,
          data_dir: config.dataDir,
          // Deployed functions answer at http://<script>.<subdomain>.<functions_domain>:<functions_port>/.
          functions_port: running.platform.functions.runtime.port,
          functions_domain: config.functionsDomain,
          // Load balancers answer here for their hostname (Host header): http://<lb name>:<traffic_port>/.
          traffic_port: running.platform.traffic.port,
          // The S3 API: endpoint http://<account_id>.r2.localhost:<s3_api_port> or http://<host>:<s3_api_port>.
          s3_api_port: running.platform.s3Api.port,
          credentials_file: credentialsFile,
          ...(running.credentials
            ? { api_key: running.credentials.api_key, api_token: running.credentials.api_token }
            : {}),
        };
        if (ctx.json) {
          process.stdout.write(`${JSON.stringify(summary)}\n`);
        } else {
          const functions = `http://<script>.<subdomain>.${config.functionsDomain}:${summary.functions_port}/`;
          const traffic = `http://<load balancer hostname>:${summary.traffic_port}/`;
          const s3 = `http://<account id>.r2.localhost:${summary.s3_api_port}/`;
          process.stdout.write(
            `Ledge is running.\n  Dashboard: ${running.dashboardUrl} (\`ledge dashboard\` prints a sign-in link)\n  API:       ${running.apiUrl}\n  Functions: ${functions}\n  Traffic:   ${traffic}\n  S3 API:    ${s3}\n  Data dir:  ${config.dataDir}\n`,
          );
          if (running.credentials) {
            process.stdout.write(
              `\nFirst start: created an account and credentials (shown once, also in ${credentialsFile}, mode 0600):\n` +
                `  account id: ${running.credentials.account_id}\n  email:      ${running.credentials.email}\n` +
                `  API key:    ${running.credentials.api_key}\n  API token:  ${running.credentials.api_token}\n`,
            );
          } else {
            // A restart: the credentials were shown on the first start only; say where they are kept.
            const where = existsSync(credentialsFile)
              ? credentialsFile
              : `${credentialsFile} is gone: make a token with \`ledge admin token create --user ${summary.email}\``;
            process.stdout.write(`  Account:   ${summary.account_id} (${summary.email})\n  Credentials: ${where}\n`);
          }
          process.stdout.write('\nPress Ctrl+C to stop.\n');
        }
        const reason = await stop;
        running.platform.logger.info('shutting down', { reason });
        // Well within 5 s, whatever hangs: workerd dies with this process anyway (see stop-request.ts).
        forceExitIfSlow(4_000, (why) => running.platform.logger.error('stopping now', { why }));
        await running.close();
      }),
    );
}
