import type { Conditional, EtagMatcher } from './types.ts';

/** What a condition is evaluated against: the current object, if there is one. */
export interface ConditionTarget {
  etag: string;
  uploaded: number;
}

/**
 * R2's evaluation (RFC 7232 rules, as the R2 simulator implements them): If-Match compares strongly
 * (weak etags never match), If-None-Match weakly, `*` matches any existing object; a passed etag
 * condition overrides the matching date condition (If-Match over uploadedBefore, If-None-Match over
 * uploadedAfter). Both date comparisons are strict, and with `secondsGranularity` both sides are
 * truncated to whole seconds. A missing object passes only when neither etagMatches nor uploadedAfter
 * is asked for.
 */
export function conditionHolds(condition: Conditional | undefined, target: ConditionTarget | undefined): boolean {
  if (!condition) return true;
  if (!target) return condition.etagMatches === undefined && condition.uploadedAfter === undefined;
  const time = condition.secondsGranularity ? (ms: number) => Math.floor(ms / 1000) * 1000 : (ms: number) => ms;
  const uploaded = time(target.uploaded);

  const ifMatch = condition.etagMatches
    ? condition.etagMatches.some((m) => matchesStrongly(m, target.etag))
    : undefined;
  if (ifMatch === false) return false;
  const ifNoneMatch = condition.etagDoesNotMatch
    ? !condition.etagDoesNotMatch.some((m) => matchesWeakly(m, target.etag))
    : undefined;
  if (ifNoneMatch === false) return false;

  if (ifMatch !== true && condition.uploadedBefore !== undefined && !(uploaded < time(condition.uploadedBefore)))
    return false;
  if (ifNoneMatch !== true && condition.uploadedAfter !== undefined && !(time(condition.uploadedAfter) < uploaded))
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
 * Dates are compared at seconds granularity because HTTP dates have no milliseconds. If-Unmodified-Since
 * also passes an object modified in that very second (RFC 7232: "earlier than or equal to"), so its
 * strict uploadedBefore is the next second.
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
  if (unmodified !== undefined) condition.uploadedBefore = unmodified + 1000;
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
