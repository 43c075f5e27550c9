import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';
import { waitFor as waitUntil } from '../helpers/wait.ts';

/** Every path under `root` (the root included) with its permission bits; symlinks are listed as such. */
function modesUnder(root: string): Map<string, { mode: number; kind: string }> {
  const found = new Map<string, { mode: number; kind: string }>();
  const visit = (path: string) => {
    const stat = lstatSync(path);
    const kind = stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'dir' : stat.isSocket() ? 'socket' : 'file';
    found.set(relative(root, path) || '.', { mode: stat.mode & 0o777, kind });
    if (kind === 'dir') for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
  return found;
}

/** The paths whose mode is not 0700 (directories) / 0600 (everything else), as "path kind mode". */
function looseModes(root: string): string[] {
  return [...modesUnder(root)]
    .filter(([, { mode, kind }]) => kind !== 'link' && mode !== (kind === 'dir' ? 0o700 : 0o600))
    .map(([path, { mode, kind }]) => `${path} ${kind} ${mode.toString(8)}`);
}

const waitFor = (check: () => boolean, what: string, timeoutMs = 10_000) =>
  waitUntil(check, what, { timeoutMs, everyMs: 25 });

describe('data dir file modes', () => {
  let previousUmask = 0;
  let ledge: TestLedge | undefined;
  const dataDir = tempDir('ledge-modes-');

  beforeAll(() => {
    // The most permissive umask: every file and directory must get its mode from Ledge, not from the umask.
    previousUmask = process.umask(0);
  });
  afterAll(async () => {
    await ledge?.close();
    process.umask(previousUmask);
  });

  it('a data dir that existed with 0755 and 0644 is 0700/0600 throughout, after a deploy, a bucket and objects', async () => {
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'notes.txt'), 'left by someone', { mode: 0o644 });
    mkdirSync(join(dataDir, 'blobs', 'zz'), { recursive: true, mode: 0o755 });
    writeFileSync(join(dataDir, 'blobs', 'zz', 'stray'), 'x', { mode: 0o666 });
    // A symlink is left alone (and not followed): its target is outside the data dir.
    const outside = join(tempDir('ledge-outside-'), 'file');
    writeFileSync(outside, 'not ours', { mode: 0o644 });
    symlinkSync(outside, join(dataDir, 'link'));

    ledge = await startLedge({ dataDir });
    const account = ledge.accountId;
    expect((await api(ledge, 'POST', `/accounts/${account}/r2/buckets`, { name: 'modes' })).status).toBe(200);
    // Above the 64 KiB inline limit, so the body is a blob file; and a small one that lives in the database.
    for (const [key, size] of [
      ['big', 300 * 1024],
      ['small', 10],
    ] as const) {
      const put = await fetch(`${ledge.apiUrl}/accounts/${account}/r2/buckets/modes/objects/${key}`, {
        method: 'PUT',
        headers: ledge.tokenHeaders,
        body: Buffer.alloc(size, 7),
      });
      expect(put.status).toBe(200);
    }
    const source =
      'export default { async fetch(request, env) { console.log("hello"); const o = await env.B.get("small"); return new Response(o ? "found" : "missing"); } };';
    const uploaded = await uploadScript(ledge, 'moder', {
      modules: { 'index.js': source },
      metadata: { bindings: [{ type: 'r2_bucket', name: 'B', bucket_name: 'modes' }] },
    });
    expect(uploaded.status).toBe(200);
    await enableWorkersDev(ledge, 'moder');
    const host = `moder.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('found');
    const logFile = join(dataDir, 'logs', 'workers', account, 'moder.log');
    await waitFor(() => existsSync(logFile), 'the function log file');
    await ledge.server.platform.notifications.mailer.send({ to: 'ops@example.com', subject: 'hi', text: 'modes' });

    const modes = modesUnder(dataDir);
    // The files this test means to cover are really there.
    for (const path of [
      'ledge.db',
      'ledge.db-wal',
      'ledge.db-shm',
      'secret.key',
      'credentials.json',
      'runtime/r2.sock',
      `logs/workers/${account}/moder.log`,
    ])
      expect(modes.has(path), path).toBe(true);
    expect(modes.get('runtime/r2.sock')?.kind).toBe('socket');
    // Blobs live in their bucket's directory (blobs/accounts/<account>/buckets/<bucket>/<2 hex>/<id>).
    const blobFile = new RegExp(`^blobs/accounts/${account}/buckets/[^/]+/[0-9a-f]{2}/[0-9a-f]{32}$`);
    expect([...modes.keys()].filter((p) => blobFile.test(p)).length).toBeGreaterThanOrEqual(1);
    expect([...modes.keys()].some((p) => p.startsWith('mail/') && p.endsWith('.json'))).toBe(true);
    expect(looseModes(dataDir)).toEqual([]);
    expect(lstatSync(outside).mode & 0o777).toBe(0o644);

    await ledge.close();
    ledge = undefined;
    expect(looseModes(dataDir)).toEqual([]);
  });

  it('a restart fixes modes loosened meanwhile (the data dir copied or restored with looser modes)', async () => {
    chmodSync(dataDir, 0o775);
    chmodSync(join(dataDir, 'ledge.db'), 0o664);
    chmodSync(join(dataDir, 'logs'), 0o755);
    ledge = await startLedge({ dataDir });
    expect(looseModes(dataDir)).toEqual([]);
  });
});
