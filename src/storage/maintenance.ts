import type { BlobStore } from './blob-store.ts';
import type { BlobGarbage } from './garbage.ts';
import type { MetadataStore } from './metadata-store.ts';

/**
 * Removes blobs that no record references and that were written before `bootTime` (by a previous
 * process that died between writing a blob and committing or deleting it), plus leftover temp files.
 * Blobs written since boot are spared: they may belong to an upload that is about to commit.
 */
export async function collectOrphans(
  store: MetadataStore,
  blobs: BlobStore,
  bootTime: number,
): Promise<{ temporary: number; orphans: number }> {
  const temporary = await blobs.removeTemporaryBefore(bootTime);
  const referenced = await store.referencedBlobIds();
  const orphans: string[] = [];
  for await (const blob of blobs.list()) {
    if (blob.modifiedAt < bootTime && !referenced.has(blob.blobId)) orphans.push(blob.blobId);
  }
  await blobs.delete(orphans);
  return { temporary, orphans: orphans.length };
}

/** Aborts multipart uploads created before `cutoff` (R2 expires abandoned uploads after 7 days). */
export async function expireUploads(store: MetadataStore, garbage: BlobGarbage, cutoff: number): Promise<number> {
  let expired = 0;
  for (;;) {
    const uploads = await store.uploadsCreatedBefore(cutoff, 100);
    if (uploads.length === 0) {
      // Finished uploads are remembered as long as unfinished ones live, then forgotten.
      await store.forgetFinishedUploads(cutoff);
      return expired;
    }
    for (const upload of uploads) {
      const parts = await store.abortUpload(upload.bucketId, upload.uploadId);
      if (parts) {
        garbage.discard(parts.map((p) => p.blobId));
        expired++;
      }
    }
  }
}
