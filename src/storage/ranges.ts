import { R2Errors } from './errors.ts';
import type { RangeRequest, ResolvedRange } from './types.ts';

/**
 * Resolves a requested range against an object's size. The object form is strict (offset past the end,
 * a non-positive length or an empty suffix is InvalidRange, a suffix larger than the object is clamped,
 * as R2 and Miniflare do); the header form
 * is lenient like HTTP: anything unsatisfiable or multi-range yields the whole object (undefined).
 */
export function resolveRange(request: RangeRequest | undefined, size: number): ResolvedRange | undefined {
  if (!request) return undefined;
  if ('header' in request) return resolveRangeHeader(request.header, size);
  const { offset, length, suffix } = request;
  if (suffix !== undefined) {
    if (offset !== undefined || length !== undefined || suffix <= 0) throw R2Errors.invalidRange();
    const take = Math.min(suffix, size);
    return { offset: size - take, length: take };
  }
  const start = offset ?? 0;
  if (start < 0 || start > size) throw R2Errors.invalidRange();
  if (length !== undefined && length <= 0) throw R2Errors.invalidRange();
  const end = length === undefined ? size : Math.min(size, start + length);
  return { offset: start, length: end - start };
}

const SINGLE_RANGE = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i;

function resolveRangeHeader(header: string, size: number): ResolvedRange | undefined {
  const match = SINGLE_RANGE.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const take = Math.min(Number(last), size);
    if (take === 0) return undefined;
    return { offset: size - take, length: take };
  }
  const start = Number(first);
  if (start >= size) return undefined;
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return undefined;
  return { offset: start, length: end - start + 1 };
}
