import { text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError, type BlobStore } from '../../../src/storage/index.ts';

export interface BlobStoreFixture {
  blobs: BlobStore;
  close(): Promise<void> | void;
}

async function* chunks(...parts: string[]) {
  for (const part of parts) yield Buffer.from(part);
}

async function* failing() {
  yield Buffer.from('partial');
  throw new Error('client went away');
}

/** The contract every BlobStore implementation must meet (filesystem today, S3-compatible later). */
export function blobStoreConformance(name: string, create: () => Promise<BlobStoreFixture> | BlobStoreFixture): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let fixture: BlobStoreFixture;
    let blobs: BlobStore;
    beforeEach(async () => {
      fixture = await create();
      blobs = fixture.blobs;
    });
    afterEach(async () => fixture.close());

    const ids = async () => {
      const found: string[] = [];
      for await (const blob of blobs.list()) found.push(blob.blobId);
      return found.sort();
    };

    it('writes a stream and reads it back whole and by range', async () => {
      const blob = await blobs.write(chunks('hello ', 'world'));
      expect(blob.size).toBe(11);
      expect(await text(await blobs.read(blob.blobId))).toBe('hello world');
      expect(await text(await blobs.read(blob.blobId, { offset: 6, length: 5 }))).toBe('world');
      expect(await text(await blobs.read(blob.blobId, { offset: 3, length: 0 }))).toBe('');
    });

    it('stores empty blobs', async () => {
      const blob = await blobs.write(chunks());
      expect(blob.size).toBe(0);
      expect(await text(await blobs.read(blob.blobId))).toBe('');
    });

    it('stores nothing when the source fails', async () => {
      await expect(blobs.write(failing())).rejects.toThrow('client went away');
      expect(await ids()).toEqual([]);
      expect(await blobs.removeTemporaryBefore(Date.now() + 1000)).toBe(0);
    });

    it('fails reads of unknown blobs before streaming', async () => {
      await expect(blobs.read('0'.repeat(32))).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it('lists and deletes blobs (unknown ids are ignored)', async () => {
      const a = await blobs.write(chunks('a'));
      const b = await blobs.write(chunks('b'));
      expect(await ids()).toEqual([a.blobId, b.blobId].sort());
      await blobs.delete([a.blobId, '1'.repeat(32)]);
      expect(await ids()).toEqual([b.blobId]);
    });

    it('keeps an opened blob readable after it is deleted', async () => {
      const blob = await blobs.write(chunks('x'.repeat(100_000)));
      const stream = await blobs.read(blob.blobId);
      await blobs.delete([blob.blobId]);
      expect((await text(stream)).length).toBe(100_000);
    });

    it("keeps a namespace's blobs together (when offered) and treats them like any other blob", async () => {
      const namespace = 'ab'.repeat(16);
      const blob = await blobs.write(chunks('mine'), { namespace });
      const plain = await blobs.write(chunks('plain'));
      expect(await text(await blobs.read(blob.blobId))).toBe('mine');
      expect(await ids()).toEqual([blob.blobId, plain.blobId].sort());
      if (blobs.localFile && blobs.namespaceRoot) {
        // The file is where localFile says, under the namespace's own directory.
        const local = blobs.localFile(blob.blobId)!;
        expect(local.namespace).toBe(namespace);
        const { readFile } = await import('node:fs/promises');
        const { join } = await import('node:path');
        expect((await readFile(join(blobs.namespaceRoot(namespace)!, local.path))).toString()).toBe('mine');
        expect(blobs.localFile(plain.blobId)).toBeUndefined();
        // A namespace that is not an id is ignored rather than turned into a path.
        const odd = await blobs.write(chunks('odd'), { namespace: '../x' });
        expect(blobs.localFile(odd.blobId)).toBeUndefined();
        expect(blobs.namespaceRoot('../x')).toBeUndefined();
        await blobs.delete([odd.blobId]);
      }
      await blobs.delete([blob.blobId]);
      expect(await ids()).toEqual([plain.blobId]);
    });

    it('opens a span as a file (when offered): unknown blobs fail, and a deleted blob stays readable', async (context) => {
      if (!blobs.openFile) return context.skip();
      await expect(blobs.openFile('0'.repeat(32), { offset: 0, length: 1 })).rejects.toBeInstanceOf(BlobNotFoundError);
      const blob = await blobs.write(chunks('hello ', 'world'));
      const file = await blobs.openFile(blob.blobId, { offset: 6, length: 5 });
      await blobs.delete([blob.blobId]);
      try {
        expect({ offset: file.offset, length: file.length }).toEqual({ offset: 6, length: 5 });
        const into = Buffer.alloc(5);
        await file.handle.read(into, 0, 5, file.offset);
        expect(into.toString()).toBe('world');
      } finally {
        await file.handle.close();
      }
    });
  });
}
