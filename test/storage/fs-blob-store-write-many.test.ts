import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/storage/index.ts';
import { tempDir } from '../helpers/ledge.ts';

const ACCOUNT = '0123456789abcdef0123456789abcdef';

async function listed(store: FsBlobStore): Promise<string[]> {
  const ids: string[] = [];
  for await (const blob of store.list()) ids.push(blob.blobId);
  return ids.sort();
}

/** Many small blobs in one go (static assets' uploads): each stored whole in its namespace, or none at all. */
describe('FsBlobStore.writeMany', () => {
  it('stores every blob, readable under its id in the namespace, and leaves no temporary file', async () => {
    const root = tempDir('blobs-many-');
    const store = new FsBlobStore(root);
    const bodies = Array.from({ length: 120 }, (_, i) => Buffer.from(`asset number ${i} `.repeat(i + 1)));
    const stored = await store.writeMany(bodies, { namespace: ACCOUNT });
    expect(stored).toHaveLength(120);
    for (const [i, blob] of stored.entries()) {
      expect(blob.blobId.startsWith(`${ACCOUNT}/`)).toBe(true);
      expect(blob.size).toBe(bodies[i]!.length);
      expect(await store.readBytes(blob.blobId, { offset: 0, length: blob.size })).toEqual(bodies[i]);
    }
    expect(await listed(store)).toEqual(stored.map((b) => b.blobId).sort());
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });

  it('stores none of them when one cannot be stored', async () => {
    const root = tempDir('blobs-many-fail-');
    const store = new FsBlobStore(root);
    const kept = await store.write(
      (async function* () {
        yield Buffer.from('already here');
      })(),
      { namespace: ACCOUNT },
    );
    // Every shard but the kept blob's is a file, not a directory: the renames into them fail.
    const namespaceDir = join(root, 'accounts', ACCOUNT);
    mkdirSync(namespaceDir, { recursive: true });
    const keptShard = kept.blobId.split('/')[1]!.slice(0, 2);
    for (let i = 0; i < 256; i++) {
      const shard = i.toString(16).padStart(2, '0');
      if (shard !== keptShard) writeFileSync(join(namespaceDir, shard), 'not a directory');
    }
    const bodies = Array.from({ length: 40 }, (_, i) => Buffer.from(`file ${i}`));
    await expect(store.writeMany(bodies, { namespace: ACCOUNT })).rejects.toThrow();
    expect(await listed(store)).toEqual([kept.blobId]);
    expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  });
});
