import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';

/**
 * The most a write holds in memory. A source that ends within it is one PutObject; a longer one is a
 * multipart upload of parts of exactly this size (R2 requires equal parts but the last; every service
 * requires at least 5 MiB but the last), each sent before more of the source is read.
 */
export const PART_SIZE = 8 * 1024 * 1024;

/**
 * Streams `source` into the object `target` and returns its size. All or nothing: a multipart upload
 * whose source or part fails is aborted; an abort that fails too leaves the upload for
 * `removeTemporaryBefore` (its parts are never visible as an object).
 */
export async function uploadObject(
  client: S3Client,
  target: { Bucket: string; Key: string },
  source: AsyncIterable<Uint8Array>,
): Promise<number> {
  const pending = new PendingBytes();
  let uploadId: string | undefined;
  const parts: CompletedPart[] = [];
  const sendPart = async (body: Buffer) => {
    const PartNumber = parts.length + 1;
    const { ETag } = await client.send(
      new UploadPartCommand({ ...target, UploadId: uploadId, PartNumber, Body: body }),
    );
    parts.push({ PartNumber, ETag });
  };
  try {
    for await (const chunk of source) {
      pending.push(chunk);
      // Strictly more than a part: a source of exactly PART_SIZE bytes is still a single PutObject.
      while (pending.size > PART_SIZE) {
        uploadId ??= (await client.send(new CreateMultipartUploadCommand(target))).UploadId;
        if (!uploadId) throw new Error('S3 CreateMultipartUpload returned no upload id');
        await sendPart(pending.take(PART_SIZE));
      }
    }
    const size = parts.length * PART_SIZE + pending.size;
    if (!uploadId) {
      await client.send(new PutObjectCommand({ ...target, Body: pending.take(size), ContentLength: size }));
      return size;
    }
    // The last part is never empty: parts are only cut while more than PART_SIZE bytes wait.
    await sendPart(pending.take(pending.size));
    await client.send(
      new CompleteMultipartUploadCommand({ ...target, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
    );
    return size;
  } catch (error) {
    if (uploadId) {
      await client.send(new AbortMultipartUploadCommand({ ...target, UploadId: uploadId })).catch(() => undefined);
    }
    throw error;
  }
}

/** Chunks received and not yet sent, cut into buffers of a given size without copying them twice. */
class PendingBytes {
  #chunks: Uint8Array[] = [];
  size = 0;

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.#chunks.push(chunk);
    this.size += chunk.byteLength;
  }

  /** The first `length` bytes (at most `size`) as one buffer; the rest of a split chunk stays. */
  take(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    let filled = 0;
    while (filled < length) {
      const chunk = this.#chunks[0]!;
      const used = Math.min(chunk.byteLength, length - filled);
      out.set(used === chunk.byteLength ? chunk : chunk.subarray(0, used), filled);
      filled += used;
      if (used === chunk.byteLength) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(used);
    }
    this.size -= length;
    return out;
  }
}
