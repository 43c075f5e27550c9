import { Readable } from 'node:stream';
import type { BlobStore, OpenBlobFile } from './blob-store.ts';
import { NUDGE_BYTES, noteStreamedBytes } from './gc-nudge.ts';
import { decryptStream, type SsecKey } from './ssec.ts';
import type { BlobSegment, ResolvedRange } from './types.ts';

/**
 * Streams an object's bytes (or a range of them) from its segments in order. A single-part object is
 * opened before this returns, so a missing blob fails the request instead of a half-sent body; the
 * parts of a multipart object are opened one after the other, never copied or concatenated.
 */
export async function openSegments(
  blobs: BlobStore,
  segments: readonly BlobSegment[],
  range: ResolvedRange,
): Promise<Readable> {
  const pieces = slicesOf(segments, range);
  if (pieces.length === 0) return Readable.from([]);
  const [first, ...rest] = pieces;
  const firstStream = await blobs.read(first!.blobId, first!.range);
  if (rest.length === 0 && first!.range.length <= NUDGE_BYTES) {
    // The common case is handed over as is: no generator and no extra stream per request. The bytes
    // are counted up front for the collector nudge (it only needs an estimate). Larger bodies are
    // counted chunk by chunk below, so the nudge keeps pace with a long stream instead of firing once.
    noteStreamedBytes(first!.range.length);
    return firstStream;
  }
  async function* all() {
    for await (const chunk of firstStream) yield counted(chunk);
    for (const piece of rest) {
      for await (const chunk of await blobs.read(piece.blobId, piece.range)) yield counted(chunk);
    }
  }
  const stream = Readable.from(all(), { objectMode: false });
  // Destroying the result (client gone) must close the blob that is open.
  stream.once('close', () => firstStream.destroy());
  return stream;
}

/**
 * `openSegments` for an SSE-C object: each piece is decrypted with the key and its segment's IV, from
 * the offset within its blob the piece starts at. The first blob is opened before this returns.
 */
export async function openDecryptedSegments(
  blobs: BlobStore,
  segments: readonly BlobSegment[],
  range: ResolvedRange,
  key: SsecKey,
): Promise<Readable> {
  const pieces = slicesOf(segments, range);
  if (pieces.length === 0) return Readable.from([]);
  const firstStream = await blobs.read(pieces[0]!.blobId, pieces[0]!.range);
  async function* all() {
    for (const [index, piece] of pieces.entries()) {
      const source = index === 0 ? firstStream : await blobs.read(piece.blobId, piece.range);
      for await (const chunk of decryptStream(source, key, piece.iv!, piece.range.offset)) yield counted(chunk);
    }
  }
  const stream = Readable.from(all(), { objectMode: false });
  stream.once('close', () => firstStream.destroy());
  return stream;
}

/**
 * The bytes of a small object (or range) in one buffer, read piece by piece with the store's
 * `readBytes`; undefined when the store has no such fast path (the caller streams instead).
 */
export async function readSegments(
  blobs: BlobStore,
  segments: readonly BlobSegment[],
  range: ResolvedRange,
): Promise<Buffer | undefined> {
  if (!blobs.readBytes) return undefined;
  const buffers: Buffer[] = [];
  for (const piece of slicesOf(segments, range)) buffers.push(await blobs.readBytes(piece.blobId, piece.range));
  const bytes = buffers.length === 1 ? buffers[0]! : Buffer.concat(buffers, range.length);
  // Same off-heap accounting as streamed chunks (see gc-nudge.ts).
  noteStreamedBytes(bytes.length);
  return bytes;
}

/** The requested span of an inline body, as a Buffer over the same bytes (no copy). */
export function inlineSlice(body: Uint8Array, range: ResolvedRange): Buffer {
  return Buffer.from(body.buffer, body.byteOffset + range.offset, range.length);
}

/** Reads a (measured, size-checked) upload body of `size` bytes into one buffer. */
export async function collectBody(source: AsyncIterable<Uint8Array>, size: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of source) chunks.push(chunk);
  return chunks.length === 1 && chunks[0]!.byteLength === size
    ? Buffer.from(chunks[0]!.buffer, chunks[0]!.byteOffset, size)
    : Buffer.concat(chunks, size);
}

/**
 * A span that lies within one blob, as that blob's open file (see BlobStore.openFile); undefined when it
 * spans several blobs or the store has no such fast path (the caller streams instead).
 */
export async function openSingleFile(
  blobs: BlobStore,
  segments: readonly BlobSegment[],
  range: ResolvedRange,
): Promise<OpenBlobFile | undefined> {
  const pieces = slicesOf(segments, range);
  const [only, ...more] = pieces;
  if (!only || more.length > 0 || !blobs.openFile) return undefined;
  return blobs.openFile(only.blobId, only.range);
}

function slicesOf(segments: readonly BlobSegment[], range: ResolvedRange) {
  const start = range.offset;
  const end = range.offset + range.length;
  const pieces: { blobId: string; iv: string | undefined; range: { offset: number; length: number } }[] = [];
  let position = 0;
  for (const segment of segments) {
    const segmentStart = position;
    const segmentEnd = position + segment.size;
    position = segmentEnd;
    if (segmentEnd <= start || segmentStart >= end || segment.size === 0) continue;
    const from = Math.max(start, segmentStart) - segmentStart;
    const to = Math.min(end, segmentEnd) - segmentStart;
    pieces.push({ blobId: segment.blobId, iv: segment.iv, range: { offset: from, length: to - from } });
  }
  return pieces;
}

function counted(chunk: Buffer): Buffer {
  noteStreamedBytes(chunk.length);
  return chunk;
}
