import { createHash } from 'node:crypto';
import { CreateBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, type TestLedge } from '../helpers/ledge.ts';
import { s3Client } from './helpers.ts';

describe('ledge s3 credentials', () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('prints the key pair of the logged-in token, and that pair signs S3 requests', async () => {
    const result = await runCli(['s3', 'credentials', '--json'], { env: cliEnv(ledge) });
    expect(result.code).toBe(0);
    const pair = JSON.parse(result.stdout) as { access_key_id: string; secret_access_key: string; region: string };
    expect(pair.secret_access_key).toBe(createHash('sha256').update(ledge.apiToken).digest('hex'));
    expect(pair.region).toBe('auto');
    const s3 = s3Client(ledge, { accessKeyId: pair.access_key_id, secretAccessKey: pair.secret_access_key });
    await s3.send(new CreateBucketCommand({ Bucket: 'from-cli-keys' }));
    expect((await s3.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['from-cli-keys']);
    s3.destroy();
  });

  it('makes the pair of another token given with --token, and refuses a global-key login without one', async () => {
    const accounts = ledge.server.platform.accounts;
    const user = await accounts.getUserByEmail(ledge.email);
    const other = await accounts.createToken({ userId: user!.id, name: 'second' });
    const text = await runCli(['s3', 'credentials', '--token', other.value], { env: cliEnv(ledge) });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`Access Key ID:     ${other.token.id}`);
    expect(text.stdout).toContain(`Secret Access Key: ${createHash('sha256').update(other.value).digest('hex')}`);
    const keyLogin = await runCli(['s3', 'credentials'], { env: cliEnv(ledge, 'key') });
    expect(keyLogin.code).toBe(1);
    expect(keyLogin.stderr).toContain('--token');
  });
});
