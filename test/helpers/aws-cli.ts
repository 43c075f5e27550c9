import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The environment the AWS CLI v2 runs in against Ledge's S3 API, in the tests and in bench/s3: `home` gets a
 * config with 8 MiB multipart parts (the size the tests and the memory bench reason about), the credentials
 * come from the environment, and nothing of the user's own set-up (~/.aws, a pager, EC2 metadata) is read.
 */
export function awsCliEnv(
  home: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
): NodeJS.ProcessEnv {
  writeFileSync(join(home, 'config'), '[default]\ns3 =\n  multipart_threshold = 8MB\n  multipart_chunksize = 8MB\n');
  return {
    PATH: process.env['PATH'],
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_DEFAULT_REGION: 'auto',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_PAGER: '',
  };
}
