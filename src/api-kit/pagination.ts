import { LedgeError } from '../shared/errors.ts';
import type { ResultInfo } from './envelope.ts';

export interface PageRequest {
  page: number;
  perPage: number;
  /** Rows to skip and to take, whichever style (page/per_page or limit/offset) the client used. */
  offset: number;
  limit: number;
}

export interface PaginationOptions {
  defaultPerPage: number;
  maxPerPage: number;
  minPerPage?: number;
  /** The v4 code for invalid values (each subsystem has its own validation code). */
  code: number;
}

/**
 * One pagination parser for every list: `page` (from 1) + `per_page`, or `limit` + `offset`.
 * Out-of-range values are refused with a clear error rather than silently clamped.
 */
export function parsePagination(query: Record<string, string | undefined>, options: PaginationOptions): PageRequest {
  const minPerPage = options.minPerPage ?? 1;
  const int = (name: string, min: number, max: number): number | undefined => {
    const raw = query[name];
    if (raw === undefined || raw === '') return undefined;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new LedgeError(400, options.code, `${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const limit = int('limit', minPerPage, options.maxPerPage);
  const offset = int('offset', 0, Number.MAX_SAFE_INTEGER);
  const usesOffset = limit !== undefined || offset !== undefined;
  if (usesOffset) {
    if (query['page'] !== undefined || query['per_page'] !== undefined) {
      throw new LedgeError(400, options.code, 'use either page/per_page or limit/offset, not both');
    }
    const take = limit ?? options.defaultPerPage;
    const skip = offset ?? 0;
    return { page: Math.floor(skip / take) + 1, perPage: take, offset: skip, limit: take };
  }
  const perPage = int('per_page', minPerPage, options.maxPerPage) ?? options.defaultPerPage;
  const page = int('page', 1, 1_000_000_000) ?? 1;
  return { page, perPage, offset: (page - 1) * perPage, limit: perPage };
}

/** `result_info` for a page; past the end `count` is 0 and `result` must be `[]` (the SDK stops there). */
export function pageInfo(request: PageRequest, count: number, totalCount: number): ResultInfo {
  return {
    page: request.page,
    per_page: request.perPage,
    count,
    total_count: totalCount,
    total_pages: Math.ceil(totalCount / request.perPage),
  };
}

/** Pages an in-memory, already ordered array (small lists such as memberships). */
export function pageOf<T>(items: readonly T[], request: PageRequest): { items: T[]; info: ResultInfo } {
  const slice = items.slice(request.offset, request.offset + request.limit);
  return { items: slice, info: pageInfo(request, slice.length, items.length) };
}
