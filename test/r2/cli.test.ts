import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  ledge = await startLedge();
  env = cliEnv(ledge);
});
afterAll(async () => ledge?.close());

describe('ledge bucket / ledge object', () => {
  it('creates a bucket and lists it with its creation date', async () => {
    const created = await runCli(['bucket', 'create', 'cli-bucket'], { env });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Created bucket cli-bucket.');
    const listed = await runCli(['bucket', 'list'], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^name\s+creation_date/m);
    expect(listed.stdout).toMatch(/^cli-bucket\s+\d{4}-\d\d-\d\dT/m);
    const json = JSON.parse((await runCli(['bucket', 'list', '--json'], { env })).stdout);
    expect(json.map((b: { name: string }) => b.name)).toContain('cli-bucket');
  });

  it('reports a duplicate and an invalid name with the v4 code and exit 1', async () => {
    const dup = await runCli(['bucket', 'create', 'cli-bucket'], { env });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('[code 10004]');
    const invalid = await runCli(['bucket', 'create', 'Bad_Name'], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('[code 10005]');
  });

  it('puts, lists, gets and deletes an object', async () => {
    const dir = tempDir('ledge-cli-obj-');
    const file = join(dir, 'in.bin');
    const content = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    writeFileSync(file, content);
    const put = await runCli(['object', 'put', 'cli-bucket/dir/file.bin', '--file', file], { env });
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toContain('Uploaded cli-bucket/dir/file.bin (70000 bytes');
    await runCli(['object', 'put', 'cli-bucket/other.txt', '--file', file], { env });
    const list = await runCli(['object', 'list', 'cli-bucket', '--prefix', 'dir/'], { env });
    expect(list.stdout).toContain('dir/file.bin');
    expect(list.stdout).not.toContain('other.txt');
    const out = join(dir, 'out.bin');
    const get = await runCli(['object', 'get', 'cli-bucket/dir/file.bin', '--file', out], { env });
    expect(get.code, get.stderr).toBe(0);
    expect(readFileSync(out).equals(content)).toBe(true);
    const stdout = await runCli(['object', 'get', 'cli-bucket/other.txt'], { env });
    expect(stdout.stdout.length).toBeGreaterThan(0);
    const del = await runCli(['object', 'delete', 'cli-bucket/dir/file.bin'], { env });
    expect(del.code).toBe(0);
    const missing = await runCli(['object', 'get', 'cli-bucket/dir/file.bin', '--file', out], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('[code 10007]');
  });

  it('refuses to delete a non-empty bucket, then deletes it once empty', async () => {
    const refused = await runCli(['bucket', 'delete', 'cli-bucket'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[code 10008]');
    await runCli(['object', 'delete', 'cli-bucket/other.txt'], { env });
    const deleted = await runCli(['bucket', 'delete', 'cli-bucket'], { env });
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await runCli(['bucket', 'list'], { env })).stdout).not.toContain('cli-bucket');
  });

  it('rejects a path without a key as a usage error', async () => {
    const result = await runCli(['object', 'get', 'just-a-bucket'], { env });
    expect(result.code).toBe(2);
  });
});

describe('ledge bucket lifecycle', () => {
  it('adds, lists and removes rules, and refuses mistakes', async () => {
    expect((await runCli(['bucket', 'create', 'cli-lifecycle'], { env })).code).toBe(0);
    const add = await runCli(
      ['bucket', 'lifecycle', 'add', 'cli-lifecycle', 'tmp', '--prefix', 'tmp/', '--expire-seconds', '90'],
      { env },
    );
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain('Added lifecycle rule tmp to bucket cli-lifecycle.');
    const abort = await runCli(
      ['bucket', 'lifecycle', 'add', 'cli-lifecycle', 'uploads', '--abort-multipart-days', '7'],
      {
        env,
      },
    );
    expect(abort.code, abort.stderr).toBe(0);
    const stored = await ledge.server.platform.storage.lifecycle.get(ledge.accountId, 'cli-lifecycle');
    expect(stored).toEqual([
      {
        id: 'tmp',
        enabled: true,
        conditions: { prefix: 'tmp/' },
        deleteObjectsTransition: { condition: { type: 'Age', maxAge: 90 } },
      },
      {
        id: 'uploads',
        enabled: true,
        conditions: { prefix: '' },
        abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 7 * 86400 } },
      },
    ]);
    const list = await runCli(['bucket', 'lifecycle', 'list', 'cli-lifecycle'], { env });
    expect(list.stdout).toMatch(/^tmp\s+yes\s+tmp\/\s+expire after 90 seconds$/m);
    expect(list.stdout).toMatch(/^uploads\s+yes\s+\(all\)\s+abort uploads after 7 days$/m);

    const dup = await runCli(['bucket', 'lifecycle', 'add', 'cli-lifecycle', 'tmp', '--expire-days', '1'], { env });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already has a rule "tmp"');
    const none = await runCli(['bucket', 'lifecycle', 'add', 'cli-lifecycle', 'x'], { env });
    expect(none.code).toBe(2);
    const bad = await runCli(['bucket', 'lifecycle', 'add', 'cli-lifecycle', 'x', '--expire-days', '1.5'], { env });
    expect(bad.code).toBe(2);

    const remove = await runCli(['bucket', 'lifecycle', 'remove', 'cli-lifecycle', 'tmp'], { env });
    expect(remove.code, remove.stderr).toBe(0);
    const json = JSON.parse((await runCli(['bucket', 'lifecycle', 'list', 'cli-lifecycle', '--json'], { env })).stdout);
    expect(json.map((r: { id: string }) => r.id)).toEqual(['uploads']);
    const missing = await runCli(['bucket', 'lifecycle', 'list', 'no-such-bucket'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not exist/);
  });
});
