import { Readable } from 'node:stream';
import type { BlobStore } from './blob-store.ts';
import type { BlobSegment, ResolvedRange } from './types.ts';

/**
 * Streams an object's bytes (or a range of them) from its segments in order. A single-part object is
 * opened before this returns, so a missing blob fails the request instead of a half-sent body; the
 * parts of a multipart object are opened one after the other, never copied or concatenated.
 */
export async function openSegments(blobs: BlobStore, segments: readonly BlobSegment[], range: ResolvedRange): Promise<Readable> {
  const pieces = slicesOf(segments, range);
  if (pieces.length === 0) return Readable.from([]);
  const [first, ...rest] = pieces;
  const firstStream = await blobs.read(first!.blobId, first!.range);
  if (rest.length === 0) return firstStream;
  async function* all() {
    yield* firstStream;
    for (const piece of rest) yield* await blobs.read(piece.blobId, piece.range);
  }
  return Readable.from(all(), { objectMode: false });
}

function slicesOf(segments: readonly BlobSegment[], range: ResolvedRange) {
  const start = range.offset;
  const end = range.offset + range.length;
  const pieces: { blobId: string; range: { offset: number; length: number } }[] = [];
  let position = 0;
  for (const segment of segments) {
    const segmentStart = position;
    const segmentEnd = position + segment.size;
    position = segmentEnd;
    if (segmentEnd <= start || segmentStart >= end || segment.size === 0) continue;
    const from = Math.max(start, segmentStart) - segmentStart;
    const to = Math.min(end, segmentEnd) - segmentStart;
    pieces.push({ blobId: segment.blobId, range: { offset: from, length: to - from } });
  }
  return pieces;
}
