import { describe, expect, it } from 'vitest';
import { nextCronTime, parseCron } from '../../src/workers/crons/cron-expression.ts';
import { parseSchedulesBody } from '../../src/workers/crons/cron-service.ts';

const next = (cron: string, after: string) =>
  nextCronTime(parseCron(cron, new Date(after)), new Date(after))?.toISOString();

describe('Cloudflare cron syntax', () => {
  it('computes the next time in UTC for plain fields, ranges, steps and lists', () => {
    expect(next('* * * * *', '2026-11-23T10:15:30Z')).toBe('2026-11-23T10:16:00.000Z');
    // Strictly after: at an exact match the next one is a minute later.
    expect(next('* * * * *', '2026-11-23T10:16:00Z')).toBe('2026-11-23T10:17:00.000Z');
    expect(next('*/5 * * * *', '2026-11-23T10:16:00Z')).toBe('2026-11-23T10:20:00.000Z');
    expect(next('0 * * * *', '2026-11-23T23:30:00Z')).toBe('2026-11-24T00:00:00.000Z');
    expect(next('30 9-17/4 * * *', '2026-11-23T10:00:00Z')).toBe('2026-11-23T13:30:00.000Z');
    expect(next('0 0 1 1 *', '2026-11-23T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('15,45 3 * * *', '2026-11-23T03:20:00Z')).toBe('2026-11-23T03:45:00.000Z');
  });

  it('reads weekdays 1-7 as Sunday-Saturday, names in any case, and months by name', () => {
    // 2026-11-23 is a Monday.
    expect(next('0 17 * * sun', '2026-11-23T00:00:00Z')).toBe('2026-11-29T17:00:00.000Z');
    expect(next('0 17 * * 1', '2026-11-23T00:00:00Z')).toBe('2026-11-29T17:00:00.000Z');
    expect(next('10 7 * * mon-fri', '2026-11-28T00:00:00Z')).toBe('2026-11-30T07:10:00.000Z');
    expect(next('10 7 * * 2-6', '2026-11-28T00:00:00Z')).toBe('2026-11-30T07:10:00.000Z');
    expect(next('0 0 1 JAN,jul *', '2026-11-23T00:00:00Z')).toBe('2027-01-01T00:00:00.000Z');
  });

  it('supports L, LW, nW, nL and n#k', () => {
    expect(next('0 0 L * *', '2027-02-01T00:00:00Z')).toBe('2027-02-28T00:00:00.000Z');
    expect(next('0 0 L * *', '2028-02-01T00:00:00Z')).toBe('2028-02-29T00:00:00.000Z');
    // The last weekday of January 2027 (31st is a Sunday): Friday the 29th.
    expect(next('59 23 LW * *', '2027-01-01T00:00:00Z')).toBe('2027-01-29T23:59:00.000Z');
    // The weekday nearest the 15th of May 2027 (a Saturday): Friday the 14th.
    expect(next('0 12 15W * *', '2027-05-01T00:00:00Z')).toBe('2027-05-14T12:00:00.000Z');
    // The last Friday of November 2026: the 27th.
    expect(next('0 18 * * 6L', '2026-11-01T00:00:00Z')).toBe('2026-11-27T18:00:00.000Z');
    expect(next('0 18 * * friL', '2026-11-01T00:00:00Z')).toBe('2026-11-27T18:00:00.000Z');
    // The third Friday of December 2026: the 18th.
    expect(next('0 15 * * 6#3', '2026-12-01T00:00:00Z')).toBe('2026-12-18T15:00:00.000Z');
  });

  it('refuses what Cloudflare refuses, naming the field', () => {
    for (const [cron, message] of [
      ['* * * *', '5 fields'],
      ['* * * * * *', '5 fields'],
      ['60 * * * *', 'minute "60" is out of range'],
      ['* 24 * * *', 'hour'],
      ['* * 0 * *', 'day-of-month'],
      ['* * * 13 *', 'month'],
      ['* * * * 8', 'day-of-week'],
      ['*/0 * * * *', 'step'],
      ['5-1 * * * *', 'backwards'],
      ['a * * * *', 'minute "a" is not valid'],
      ['0 0 30 2 *', 'never fires'],
      ['* * * * MON#6', '1-5'],
    ] as const) {
      expect(() => parseCron(cron, new Date()), cron).toThrow(message);
    }
  });

  it('validates the body wrangler sends', () => {
    expect(parseSchedulesBody([{ cron: '*/5  *  * * *' }, { cron: '*/5 * * * *' }], new Date())).toEqual([
      '*/5 * * * *',
    ]);
    expect(parseSchedulesBody([], new Date())).toEqual([]);
    expect(() => parseSchedulesBody({ cron: '* * * * *' }, new Date())).toThrow('array');
    expect(() => parseSchedulesBody([{ schedule: '* * * * *' }], new Date())).toThrow('Item 0');
    expect(() => parseSchedulesBody([{ cron: 'every minute' }], new Date())).toThrow('Invalid cron expression');
    expect(() =>
      parseSchedulesBody(
        Array.from({ length: 251 }, () => ({ cron: '* * * * *' })),
        new Date(),
      ),
    ).toThrow('at most 250');
  });
});
