import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { registerRunningServer } from '../shared/server-registry.ts';
import { environmentHelp, flagOptions, type ServerFlags } from '../server/settings/index.ts';
import { handler } from './context.ts';

export function registerServer(program: Command): void {
  const command = program.command('server');
  // Every flag, and the environment-only settings after them, from the one settings schema.
  for (const option of flagOptions()) command.option(option.flags, option.description);
  command
    .addHelpText('after', environmentHelp())
    .description('Run the platform: the /client/v4 API, object storage, functions, health checks and notifications')
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
        // The flags by setting key; the environment fills the rest (settings/schema.ts).
        const config = resolveServerConfig(ctx.options as ServerFlags);
        const running = await startServer(config, undefined, { clock: ctx.clock });
        // Bundled now, in the background, so the first page view finds it ready (embedded servers bundle on
        // their first view instead); a failure is logged here and answered on that view.
        running.platform.dashboard
          .assets()
          .catch((error: unknown) => running.platform.logger.error('dashboard bundle failed', { err: error }));
        // Lets `ledge` find this server from any directory (removed when this process exits).
        registerRunningServer(
          {
            apiUrl: running.apiUrl,
            dataDir: config.dataDir,
            endpoints: {
              s3_api_port: running.platform.s3Api.port,
              traffic_port: running.platform.traffic.port,
              functions_port: running.platform.functions.runtime.port,
              functions_domain: config.functionsDomain,
              public_domain: config.r2.publicDomain,
            },
          },
          running.platform.clock,
        );
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
          // The same hostnames over HTTPS (HTTP/1.1 and HTTP/2), the certificate chosen by SNI.
          traffic_tls_port: running.platform.traffic.tlsPort,
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
        // Well within 5 s, whatever hangs: workerd dies with this process anyway (see stop-request.ts). On several
        // nodes the workerd cluster instances first hand their objects to the other nodes: they get that time too.
        const handOffMs = running.platform.cluster.shared && config.s3 ? config.cluster.stopTimeoutMs + 2_000 : 0;
        forceExitIfSlow(4_000 + handOffMs, running.platform.clock, (why) =>
          running.platform.logger.error('stopping now', { why }),
        );
        await running.close();
      }),
    );
}
