import { describe, expect, it } from 'vitest';
import { conditionalFromHeaders, conditionHolds } from '../../src/storage/conditionals.ts';
import { resolveRange } from '../../src/storage/ranges.ts';

const target = { etag: 'abc', uploaded: Date.parse('2026-01-01T00:00:00.500Z') };
const strong = (value: string) => ({ type: 'strong' as const, value });

describe('conditionals (RFC 7232 as R2 applies them)', () => {
  it('matches If-Match strongly only and If-None-Match weakly', () => {
    expect(conditionHolds({ etagMatches: [strong('abc')] }, target)).toBe(true);
    expect(conditionHolds({ etagMatches: [{ type: 'weak', value: 'abc' }] }, target)).toBe(false);
    expect(conditionHolds({ etagDoesNotMatch: [{ type: 'weak', value: 'abc' }] }, target)).toBe(false);
    expect(conditionHolds({ etagMatches: [{ type: 'wildcard' }] }, target)).toBe(true);
    expect(conditionHolds({ etagDoesNotMatch: [{ type: 'wildcard' }] }, target)).toBe(false);
  });

  it('lets a passed etag condition override the date condition', () => {
    const before = Date.parse('2025-01-01T00:00:00Z');
    expect(conditionHolds({ uploadedBefore: before }, target)).toBe(false);
    expect(conditionHolds({ uploadedBefore: before, etagMatches: [strong('abc')] }, target)).toBe(true);
    const after = Date.parse('2027-01-01T00:00:00Z');
    expect(conditionHolds({ uploadedAfter: after }, target)).toBe(false);
    expect(conditionHolds({ uploadedAfter: after, etagDoesNotMatch: [strong('zzz')] }, target)).toBe(true);
  });

  it('compares at seconds granularity when asked', () => {
    const sameSecond = Date.parse('2026-01-01T00:00:00Z');
    expect(conditionHolds({ uploadedAfter: sameSecond }, target)).toBe(true);
    expect(conditionHolds({ uploadedAfter: sameSecond, secondsGranularity: true }, target)).toBe(false);
  });

  it('compares dates strictly, truncating both sides with secondsGranularity (as R2)', () => {
    const exact = target.uploaded;
    expect(conditionHolds({ uploadedBefore: exact }, target)).toBe(false);
    expect(conditionHolds({ uploadedBefore: exact + 1 }, target)).toBe(true);
    expect(conditionHolds({ uploadedAfter: exact }, target)).toBe(false);
    expect(conditionHolds({ uploadedAfter: exact - 1 }, target)).toBe(true);
    const sg = { secondsGranularity: true };
    // exact + 1 is in the object's second: truncated, not before it.
    expect(conditionHolds({ uploadedBefore: exact + 1, ...sg }, target)).toBe(false);
    expect(conditionHolds({ uploadedBefore: Date.parse('2026-01-01T00:00:01Z'), ...sg }, target)).toBe(true);
    // exact - 1 is in the object's second too: truncated, not after it.
    expect(conditionHolds({ uploadedAfter: exact - 1, ...sg }, target)).toBe(false);
    expect(conditionHolds({ uploadedAfter: Date.parse('2025-12-31T23:59:59.999Z'), ...sg }, target)).toBe(true);
  });

  it('keeps HTTP semantics for the object API: If-Unmodified-Since passes in the same second', () => {
    const sameSecond = 'Thu, 01 Jan 2026 00:00:00 GMT';
    expect(conditionHolds(conditionalFromHeaders({ ifUnmodifiedSince: sameSecond }), target)).toBe(true);
    expect(conditionHolds(conditionalFromHeaders({ ifUnmodifiedSince: 'Wed, 31 Dec 2025 23:59:59 GMT' }), target)).toBe(
      false,
    );
    expect(conditionHolds(conditionalFromHeaders({ ifModifiedSince: sameSecond }), target)).toBe(false);
  });

  it('lets a missing object pass only without etagMatches and uploadedAfter', () => {
    expect(conditionHolds({ etagDoesNotMatch: [{ type: 'wildcard' }] }, undefined)).toBe(true);
    expect(conditionHolds({ uploadedBefore: 1 }, undefined)).toBe(true);
    expect(conditionHolds({ etagMatches: [strong('abc')] }, undefined)).toBe(false);
    expect(conditionHolds({ uploadedAfter: 1 }, undefined)).toBe(false);
  });

  it('parses conditional headers', () => {
    expect(conditionalFromHeaders({ ifMatch: '"a", W/"b", *' })).toEqual({
      etagMatches: [strong('a'), { type: 'weak', value: 'b' }, { type: 'wildcard' }],
      secondsGranularity: true,
    });
    expect(conditionalFromHeaders({})).toBeUndefined();
  });
});

describe('ranges', () => {
  it('resolves object-form ranges strictly', () => {
    expect(resolveRange({ offset: 2, length: 3 }, 10)).toEqual({ offset: 2, length: 3 });
    expect(resolveRange({ offset: 8, length: 5 }, 10)).toEqual({ offset: 8, length: 2 });
    expect(resolveRange({ offset: 10 }, 10)).toEqual({ offset: 10, length: 0 });
    expect(resolveRange({ suffix: 30 }, 10)).toEqual({ offset: 0, length: 10 });
    expect(() => resolveRange({ offset: 11 }, 10)).toThrow(/not satisfiable/);
    expect(() => resolveRange({ length: 0 }, 10)).toThrow(/not satisfiable/);
  });

  it('resolves header ranges leniently (whole object when unsatisfiable or multiple)', () => {
    expect(resolveRange({ header: 'bytes=2-4' }, 10)).toEqual({ offset: 2, length: 3 });
    expect(resolveRange({ header: 'bytes=7-' }, 10)).toEqual({ offset: 7, length: 3 });
    expect(resolveRange({ header: 'bytes=-3' }, 10)).toEqual({ offset: 7, length: 3 });
    expect(resolveRange({ header: 'bytes=5-100' }, 10)).toEqual({ offset: 5, length: 5 });
    expect(resolveRange({ header: 'bytes=10-12' }, 10)).toBeUndefined();
    expect(resolveRange({ header: 'bytes=0-1,3-4' }, 10)).toBeUndefined();
    expect(resolveRange({ header: 'items=0-1' }, 10)).toBeUndefined();
  });
});
