import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnLedge, startLedge, tempDir, TEST_CREDENTIALS, type SpawnedLedge } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';

const auth = { authorization: `Bearer ${TEST_CREDENTIALS.apiToken}` };
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const bodyFor = (i: number, size: number) => {
  const body = Buffer.alloc(size);
  for (let at = 0; at < size; at += 4) body.writeUInt32LE((i * 2654435761 + at) >>> 0, at);
  return body;
};

/**
 * A body that trickles in. With `holdAt`, it stops after that many bytes until `release` settles, then
 * fails: an upload that is guaranteed to be in flight when the server is killed.
 */
function trickle(
  body: Buffer,
  chunk = 32 * 1024,
  delayMs = 4,
  hold?: { at: number; release: Promise<void> },
): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      if (hold && at >= hold.at) {
        await hold.release;
        return controller.error(new Error('upload abandoned'));
      }
      if (at >= body.length) return controller.close();
      // The trickling upload's pace (the fixture's behaviour, not a wait of the test).
      await new Promise((r) => setTimeout(r, delayMs));
      controller.enqueue(body.subarray(at, at + chunk));
      at += chunk;
    },
  });
}

/** Every acknowledged upload reads back over HTTP with its bytes and the etag its PUT answered. */
async function expectAcknowledgedIntact(
  server: SpawnedLedge,
  bucket: string,
  acknowledged: Map<string, string>,
  bodyOf: (key: string) => Buffer,
): Promise<void> {
  const base = `${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets/${bucket}/objects`;
  for (const [key, etag] of acknowledged) {
    const response = await fetch(`${base}/${key}`, { headers: auth });
    expect(response.status, key).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.equals(bodyOf(key)), key).toBe(true);
    expect(md5(bytes)).toBe(etag);
  }
}

/** Blob file names anywhere under blobs/ (the flat layout and accounts/<id>/), and the temporary files. */
function blobFiles(dataDir: string): { blobs: string[]; temporary: string[] } {
  const root = join(dataDir, 'blobs');
  const blobs: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (dir !== root || entry.name !== 'tmp') walk(join(dir, entry.name));
      } else blobs.push(entry.name);
    }
  };
  if (existsSync(root)) walk(root);
  const tmp = join(root, 'tmp');
  return { blobs, temporary: existsSync(tmp) ? readdirSync(tmp) : [] };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('durability', () => {
  it('keeps every acknowledged upload intact across SIGKILL, shows no partial object, collects orphans', async () => {
    const dataDir = tempDir('ledge-kill-');
    dirs.push(dataDir);
    let server: SpawnedLedge = await spawnLedge(dataDir);
    const buckets = `${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`;
    expect(
      (await fetch(buckets, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'crash' }) })).status,
    ).toBe(200);

    const SIZE = 384 * 1024;
    const acknowledged = new Map<string, string>();
    let killed = false;
    let release: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reachedQuota: () => void;
    const quota = new Promise<void>((r) => (reachedQuota = r));
    const uploads = Array.from({ length: 100 }, async (_, i) => {
      const key = `upload-${i}`;
      const body = bodyFor(i, SIZE);
      try {
        const response = await fetch(`${buckets}/crash/objects/${key}`, {
          method: 'PUT',
          headers: { ...auth, 'content-length': String(SIZE) },
          // Half the uploads complete (and reach the quota); half stall midway and are in flight at the kill.
          body: i < 50 ? trickle(body, 32 * 1024, 2) : trickle(body, 32 * 1024, 1, { at: SIZE / 2, release: released }),
          duplex: 'half',
        } as RequestInit);
        const result = (await response.json()) as { success: boolean; result: { etag: string } };
        if (response.status === 200 && result.success && !killed) {
          acknowledged.set(key, result.result.etag);
          if (acknowledged.size >= 25) reachedQuota();
        }
      } catch {
        // Connections cut by the kill: not acknowledged.
      }
    });
    await quota;
    // The stalled uploads have reached the server: their temp files exist at the kill (real I/O: the server's
    // writes in another process).
    await waitFor(() => blobFiles(dataDir).temporary.length > 0, 'temp files of the stalled uploads');
    killed = true;
    await server.stop('SIGKILL');
    release!();
    await Promise.all(uploads);
    expect(acknowledged.size).toBeGreaterThanOrEqual(25);
    expect(acknowledged.size).toBeLessThan(100);
    // The kill caught uploads mid-stream: their temp files are on disk until the restart collects them.
    expect(blobFiles(dataDir).temporary.length).toBeGreaterThan(0);
    // And a blob renamed into place whose commit never happened (a kill between rename and commit).
    // In the flat layout of older data dirs and in the account's directory alike.
    const orphanId = 'ab'.padEnd(32, '0');
    const accountOrphanId = 'cd'.padEnd(32, '1');
    for (const [dir, id] of [
      [join(dataDir, 'blobs', 'ab'), orphanId],
      [join(dataDir, 'blobs', 'accounts', TEST_CREDENTIALS.accountId, 'cd'), accountOrphanId],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, id), 'orphan');
      utimesSync(join(dir, id), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    }

    server = await spawnLedge(dataDir);
    try {
      await expectAcknowledgedIntact(server, 'crash', acknowledged, (key) => bodyFor(Number(key.split('-')[1]), SIZE));
      const base = `${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets/crash/objects`;
      const listed = (await (await fetch(`${base}?per_page=1000`, { headers: auth })).json()) as {
        result: { key: string; size: number; etag: string }[];
      };
      for (const object of listed.result) {
        // Unacknowledged uploads may or may not have committed, but never partially.
        const index = Number(object.key.split('-')[1]);
        expect(object.size).toBe(SIZE);
        expect(object.etag).toBe(md5(bodyFor(index, SIZE)));
      }
      expect(listed.result.length).toBeGreaterThanOrEqual(acknowledged.size);
      const files = blobFiles(dataDir);
      expect(files.temporary).toEqual([]);
      expect(files.blobs).not.toContain(orphanId);
      expect(files.blobs).not.toContain(accountOrphanId);
      expect(files.blobs.length).toBe(listed.result.length);
    } finally {
      await server.stop();
    }
  });

  it('keeps every acknowledged small (inline) upload across SIGKILL, and stores none as a blob file', async () => {
    const dataDir = tempDir('ledge-kill-inline-');
    dirs.push(dataDir);
    let server: SpawnedLedge = await spawnLedge(dataDir);
    const buckets = `${server.apiUrl}/accounts/${TEST_CREDENTIALS.accountId}/r2/buckets`;
    await fetch(buckets, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'small' }) });
    const SIZE = 2048;
    const acknowledged = new Map<string, string>();
    let killed = false;
    let reachedQuota: () => void;
    const quota = new Promise<void>((r) => (reachedQuota = r));
    // 16 writers put small objects back to back (their commits share WAL syncs) until the kill.
    const writers = Array.from({ length: 16 }, async (_, writer) => {
      for (let n = 0; !killed; n++) {
        const key = `w${writer}-${n}`;
        try {
          const response = await fetch(`${buckets}/small/objects/${key}`, {
            method: 'PUT',
            headers: { ...auth, 'content-length': String(SIZE) },
            body: bodyFor(writer * 100_000 + n, SIZE),
          });
          const result = (await response.json()) as { success: boolean; result: { etag: string } };
          if (response.status === 200 && result.success && !killed) acknowledged.set(key, result.result.etag);
          if (acknowledged.size >= 200) reachedQuota();
        } catch {
          return; // the kill cut the connection: not acknowledged
        }
      }
    });
    await quota;
    killed = true;
    await server.stop('SIGKILL');
    await Promise.all(writers);

    server = await spawnLedge(dataDir);
    try {
      await expectAcknowledgedIntact(server, 'small', acknowledged, (key) => {
        const [writer, n] = key.slice(1).split('-').map(Number);
        return bodyFor(writer! * 100_000 + n!, SIZE);
      });
      expect(blobFiles(dataDir).blobs).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('never serves a mixed body when concurrent PUTs race on one key over HTTP', async () => {
    const ledge = await startLedge();
    try {
      const buckets = `${ledge.apiUrl}/accounts/${ledge.accountId}/r2/buckets`;
      await fetch(buckets, { method: 'POST', headers: ledge.tokenHeaders, body: JSON.stringify({ name: 'race' }) });
      const bodies = Array.from({ length: 16 }, (_, i) => bodyFor(i + 1000, 200 * 1024));
      const readers: Promise<void>[] = [];
      await Promise.all(
        bodies.map(async (body, i) => {
          await fetch(`${buckets}/race/objects/hot`, {
            method: 'PUT',
            headers: { ...ledge.tokenHeaders, 'content-length': String(body.length) },
            body: trickle(body, 16 * 1024, 1 + (i % 4)),
            duplex: 'half',
          } as RequestInit);
          // Reads interleaved with the writes must each see one complete body.
          readers.push(
            (async () => {
              const response = await fetch(`${buckets}/race/objects/hot`, { headers: ledge.tokenHeaders });
              const got = Buffer.from(await response.arrayBuffer());
              expect(bodies.some((b) => b.equals(got))).toBe(true);
              expect(response.headers.get('etag')).toBe(`"${md5(got)}"`);
            })(),
          );
        }),
      );
      await Promise.all(readers);
      const final = Buffer.from(
        await (await fetch(`${buckets}/race/objects/hot`, { headers: ledge.tokenHeaders })).arrayBuffer(),
      );
      expect(bodies.some((b) => b.equals(final))).toBe(true);
    } finally {
      await ledge.close();
    }
  });
});
