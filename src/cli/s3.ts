import type { Command } from 'commander';
import { ApiClient, verifyToken } from '../client/index.ts';
import { hashCredential } from '../shared/crypto.ts';
import { DEFAULT_S3_API_PORT } from '../shared/default-ports.ts';
import { handler } from './context.ts';
import { CliError } from './errors.ts';
import { printJson } from './output.ts';

/**
 * `ledge s3 credentials`: the S3 access key pair of an API token, made as R2 makes it: the access key id is
 * the token's id (asked of the server), the secret access key the SHA-256 hex of the token's value
 * (computed here; the token never leaves this machine for it).
 */
export function registerS3(program: Command): void {
  const s3 = program.command('s3').description('The S3 API (R2-compatible endpoint)');
  s3.command('credentials')
    .description("Print the S3 access key pair of an API token (default: the token you're logged in with)")
    .option('--token <value>', 'the API token to make the pair of (default: the current credentials)')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx) => {
        const given = ctx.options['token'] as string | undefined;
        const auth = ctx.connection.auth;
        const token = given ?? ('token' in auth ? auth.token : undefined);
        if (!token) {
          throw new CliError('S3 credentials are made from an API token: log in with one, or pass --token <value>');
        }
        const client = given ? new ApiClient({ apiUrl: ctx.connection.apiUrl, auth: { token } }) : ctx.client;
        const { id } = await verifyToken(client);
        const accountId = await ctx.accountId().catch(() => undefined);
        const host = new URL(ctx.connection.apiUrl).hostname;
        const endpoint = accountId
          ? `http://${accountId}.r2.localhost:${DEFAULT_S3_API_PORT}`
          : `http://${host}:${DEFAULT_S3_API_PORT}`;
        const pair = { access_key_id: id, secret_access_key: hashCredential(token), endpoint, region: 'auto' };
        if (ctx.json) {
          printJson(pair);
          return;
        }
        process.stdout.write(
          `Access Key ID:     ${pair.access_key_id}\nSecret Access Key: ${pair.secret_access_key}\n` +
            `Endpoint:          ${pair.endpoint} (default port; see --s3-api-port)\nRegion:            auto\n`,
        );
      }),
    );
}
