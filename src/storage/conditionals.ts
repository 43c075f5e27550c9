import type { Conditional, EtagMatcher } from './types.ts';

/** What a condition is evaluated against: the current object, if there is one. */
export interface ConditionTarget {
  etag: string;
  uploaded: number;
}

/**
 * RFC 7232 evaluation as R2 does it: If-Match compares strongly (weak etags never match), If-None-Match
 * weakly, `*` matches any existing object; a passed etag condition overrides the matching date
 * condition (If-Match over If-Unmodified-Since, If-None-Match over If-Modified-Since). A missing object
 * passes only when neither etagMatches nor uploadedAfter is asked for.
 */
export function conditionHolds(condition: Conditional | undefined, target: ConditionTarget | undefined): boolean {
  if (!condition) return true;
  if (!target) return condition.etagMatches === undefined && condition.uploadedAfter === undefined;
  const uploaded = condition.secondsGranularity ? Math.floor(target.uploaded / 1000) * 1000 : target.uploaded;

  const ifMatch = condition.etagMatches
    ? condition.etagMatches.some((m) => matchesStrongly(m, target.etag))
    : undefined;
  if (ifMatch === false) return false;
  const ifNoneMatch = condition.etagDoesNotMatch
    ? !condition.etagDoesNotMatch.some((m) => matchesWeakly(m, target.etag))
    : undefined;
  if (ifNoneMatch === false) return false;

  if (ifMatch !== true && condition.uploadedBefore !== undefined && uploaded > condition.uploadedBefore) return false;
  if (ifNoneMatch !== true && condition.uploadedAfter !== undefined && uploaded <= condition.uploadedAfter)
    return false;
  return true;
}

function matchesStrongly(matcher: EtagMatcher, etag: string): boolean {
  if (matcher.type === 'wildcard') return true;
  return matcher.type === 'strong' && matcher.value === etag;
}

function matchesWeakly(matcher: EtagMatcher, etag: string): boolean {
  if (matcher.type === 'wildcard') return true;
  return matcher.value === etag;
}

/**
 * Turns HTTP conditional headers into a `Conditional` (the object API; the binding converts its own).
 * Dates are compared at seconds granularity because HTTP dates have no milliseconds.
 */
export function conditionalFromHeaders(headers: {
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
  ifModifiedSince?: string | undefined;
  ifUnmodifiedSince?: string | undefined;
}): Conditional | undefined {
  const condition: Conditional = {};
  if (headers.ifMatch) condition.etagMatches = parseEtagList(headers.ifMatch);
  if (headers.ifNoneMatch) condition.etagDoesNotMatch = parseEtagList(headers.ifNoneMatch);
  const since = parseHttpDate(headers.ifModifiedSince);
  const unmodified = parseHttpDate(headers.ifUnmodifiedSince);
  if (since !== undefined) condition.uploadedAfter = since;
  if (unmodified !== undefined) condition.uploadedBefore = unmodified;
  if (Object.keys(condition).length === 0) return undefined;
  condition.secondsGranularity = true;
  return condition;
}

export function parseEtagList(header: string): EtagMatcher[] {
  return header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part): EtagMatcher => {
      if (part === '*') return { type: 'wildcard' };
      const weak = part.startsWith('W/');
      const value = (weak ? part.slice(2) : part).replace(/^"(.*)"$/, '$1');
      return { type: weak ? 'weak' : 'strong', value };
    });
}

function parseHttpDate(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
