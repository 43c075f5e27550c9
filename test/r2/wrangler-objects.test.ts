import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';

/** The real wrangler 4 `r2 bucket` and `r2 object --remote` commands against Ledge's object API. */
describe('wrangler r2 commands against Ledge', () => {
  let ledge: TestLedge;
  let dir: string;
  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: dir,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });

  beforeAll(async () => {
    ledge = await startLedge();
    dir = tempDir('ledge-wrangler-r2-');
  });
  afterAll(async () => ledge?.close());

  it('creates a bucket, then reports the duplicate', async () => {
    const created = await wrangler(['r2', 'bucket', 'create', 'wrangler-objects']);
    expect(created.code, created.stderr).toBe(0);
    expect(await ledge.server.platform.storage.getBucket(ledge.accountId, 'wrangler-objects')).toBeDefined();
    const again = await wrangler(['r2', 'bucket', 'create', 'wrangler-objects']);
    expect(again.code).not.toBe(0);
    expect(`${again.stdout}${again.stderr}`).toMatch(/10004|already exists/);
  });

  it('puts, gets and deletes an object with --remote', async () => {
    const input = join(dir, 'in.txt');
    const output = join(dir, 'out.txt');
    writeFileSync(input, 'from wrangler ✓\n'.repeat(1000));
    const put = await wrangler([
      'r2',
      'object',
      'put',
      'wrangler-objects/notes/a.txt',
      '--file',
      input,
      '--content-type',
      'text/plain',
      '--remote',
    ]);
    expect(put.code, `${put.stdout}${put.stderr}`).toBe(0);
    const bucket = (await ledge.server.platform.storage.getBucket(ledge.accountId, 'wrangler-objects'))!;
    const stored = await ledge.server.platform.storage.objects.head(bucket, 'notes/a.txt');
    expect(stored).toMatchObject({ size: readFileSync(input).length, httpMetadata: { contentType: 'text/plain' } });
    const get = await wrangler(['r2', 'object', 'get', 'wrangler-objects/notes/a.txt', '--file', output, '--remote']);
    expect(get.code, `${get.stdout}${get.stderr}`).toBe(0);
    expect(readFileSync(output).equals(readFileSync(input))).toBe(true);
    const del = await wrangler(['r2', 'object', 'delete', 'wrangler-objects/notes/a.txt', '--remote']);
    expect(del.code, `${del.stdout}${del.stderr}`).toBe(0);
    expect(await ledge.server.platform.storage.objects.head(bucket, 'notes/a.txt')).toBeUndefined();
  });
});
