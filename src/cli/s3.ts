import type { Command } from 'commander';
import { ApiClient, verifyToken } from '../client/index.ts';
import { hashCredential } from '../shared/crypto.ts';
import { handler } from './context.ts';
import { serverEndpoints } from './endpoints.ts';
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
        const endpoints = serverEndpoints(ctx.connection.apiUrl);
        const pair = {
          access_key_id: id,
          secret_access_key: hashCredential(token),
          endpoint: endpoints.s3Endpoint,
          // false: not a server of this machine, so the port is the default one (it may run elsewhere).
          endpoint_from_server: endpoints.known,
          region: 'auto',
        };
        if (ctx.json) {
          printJson(pair);
          return;
        }
        process.stdout.write(awsSettings(pair, endpoints.known));
      }),
    );
}

/**
 * The pair, then settings to paste for the AWS CLI. The endpoint goes in the `--endpoint-url` flag: the AWS
 * CLI reads `endpoint_url` from its config and `AWS_ENDPOINT_URL` only from v2.13 (Debian 12 ships 2.9), so
 * they are shown as what newer versions may use instead.
 */
function awsSettings(pair: { access_key_id: string; secret_access_key: string; endpoint: string }, known: boolean) {
  const note = known ? '' : ' (the default port: the server is not on this machine, see its --s3-api-port)';
  const flag = `--endpoint-url ${pair.endpoint}`;
  return (
    `Access Key ID:     ${pair.access_key_id}\nSecret Access Key: ${pair.secret_access_key}\n` +
    `Endpoint:          ${pair.endpoint}${note}\nRegion:            auto\n\n` +
    `AWS CLI profile (~/.aws/credentials, then ~/.aws/config):\n` +
    `  [ledge]\n  aws_access_key_id = ${pair.access_key_id}\n  aws_secret_access_key = ${pair.secret_access_key}\n\n` +
    `  [profile ledge]\n  region = auto\n  s3 =\n    addressing_style = path\n\n` +
    `  aws --profile ledge ${flag} s3 ls\n\n` +
    `Or in the environment:\n` +
    `  export AWS_ACCESS_KEY_ID=${pair.access_key_id}\n  export AWS_SECRET_ACCESS_KEY=${pair.secret_access_key}\n` +
    `  export AWS_DEFAULT_REGION=auto\n` +
    `  aws ${flag} s3 ls\n\n` +
    `AWS CLI v2.13 and later also take the endpoint from \`endpoint_url = ${pair.endpoint}\` in the profile or\n` +
    `AWS_ENDPOINT_URL=${pair.endpoint} (older versions, such as Debian 12's 2.9, ignore both: keep the flag).\n`
  );
}
