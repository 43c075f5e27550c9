/**
 * Cloudflare's cron syntax for Cron Triggers (UTC, five fields: minute hour day-of-month month
 * day-of-week). Each field takes `*`, values, ranges `a-b`, steps `*\/n` `a/n` `a-b/n` and lists;
 * months take JAN-DEC and weekdays SUN-SAT (any case). Weekdays are 1-7 with 1 = Sunday as in
 * Cloudflare's docs (0 is also read as Sunday, as in Unix cron). Day-of-month also takes `L` (last
 * day), `LW` (last weekday) and `nW` (weekday nearest the nth); day-of-week takes `nL` (last such day
 * of the month) and `n#k` (kth such day). When both day fields are restricted, a day matching either
 * fires, as in Unix cron.
 */

export interface CronExpression {
  source: string;
  minutes: Set<number>;
  hours: Set<number>;
  months: Set<number>;
  /** A predicate per day field (null: `*`). */
  dayOfMonth: ((date: Date) => boolean) | null;
  dayOfWeek: ((date: Date) => boolean) | null;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
/** How far ahead an expression is searched for its next time: one that never fires in 5 years is refused. */
const SEARCH_DAYS = 366 * 5 + 2;

export class CronSyntaxError extends Error {}

/**
 * Parses and validates an expression; throws CronSyntaxError with a message naming the faulty field, or
 * when it does not fire in the 5 years after `now`.
 */
export function parseCron(source: string, now: Date): CronExpression {
  const fields = source.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    throw new CronSyntaxError(`"${source}" must have 5 fields (minute hour day-of-month month day-of-week)`);
  }
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  const expression: CronExpression = {
    source,
    minutes: parseSet(minute, 0, 59, 'minute'),
    hours: parseSet(hour, 0, 23, 'hour'),
    months: parseSet(month, 1, 12, 'month', MONTHS, 1),
    dayOfMonth: dom === '*' ? null : parseDayOfMonth(dom),
    dayOfWeek: dow === '*' ? null : parseDayOfWeek(dow),
  };
  if (!nextCronTime(expression, now)) throw new CronSyntaxError(`"${source}" never fires`);
  return expression;
}

/** The first time strictly after `after` (whole minutes, UTC) the expression fires, or undefined. */
export function nextCronTime(expression: CronExpression, after: Date): Date | undefined {
  const start = new Date(Math.floor(after.getTime() / 60_000) * 60_000 + 60_000);
  const minutes = [...expression.minutes].sort((a, b) => a - b);
  const hours = [...expression.hours].sort((a, b) => a - b);
  const day = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
  for (let i = 0; i < SEARCH_DAYS; i++, day.setUTCDate(day.getUTCDate() + 1)) {
    if (!expression.months.has(day.getUTCMonth() + 1) || !dayMatches(expression, day)) continue;
    const sameDay = i === 0;
    for (const h of hours) {
      if (sameDay && h < start.getUTCHours()) continue;
      for (const m of minutes) {
        if (sameDay && h === start.getUTCHours() && m < start.getUTCMinutes()) continue;
        return new Date(day.getTime() + h * 3_600_000 + m * 60_000);
      }
    }
  }
  return undefined;
}

function dayMatches(expression: CronExpression, day: Date): boolean {
  const { dayOfMonth, dayOfWeek } = expression;
  if (dayOfMonth && dayOfWeek) return dayOfMonth(day) || dayOfWeek(day);
  if (dayOfMonth) return dayOfMonth(day);
  if (dayOfWeek) return dayOfWeek(day);
  return true;
}

function daysInMonth(day: Date): number {
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 0)).getUTCDate();
}

function isWeekday(date: Date): boolean {
  const d = date.getUTCDay();
  return d !== 0 && d !== 6;
}

function parseDayOfMonth(field: string): (date: Date) => boolean {
  const parts = field.split(',').map((part): ((date: Date) => boolean) => {
    const upper = part.toUpperCase();
    if (upper === 'L') return (date) => date.getUTCDate() === daysInMonth(date);
    if (upper === 'LW') {
      return (date) => {
        const last = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), daysInMonth(date)));
        while (!isWeekday(last)) last.setUTCDate(last.getUTCDate() - 1);
        return date.getUTCDate() === last.getUTCDate();
      };
    }
    const nearest = /^(\d{1,2})W$/.exec(upper);
    if (nearest) {
      const target = Number(nearest[1]);
      if (target < 1 || target > 31) throw new CronSyntaxError(`day-of-month "${part}" is out of range (1-31)`);
      return (date) => date.getUTCDate() === nearestWeekday(date, target);
    }
    const values = parseSet(part, 1, 31, 'day-of-month');
    return (date) => values.has(date.getUTCDate());
  });
  return (date) => parts.some((matches) => matches(date));
}

/** The day (of the month of `date`) of the weekday nearest the `target`th, within the month. */
function nearestWeekday(date: Date, target: number): number {
  const last = daysInMonth(date);
  const day = Math.min(target, last);
  const at = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), day));
  const dow = at.getUTCDay();
  if (dow === 6) return day === 1 ? 3 : day - 1;
  if (dow === 0) return day === last ? day - 2 : day + 1;
  return day;
}

function parseDayOfWeek(field: string): (date: Date) => boolean {
  const parts = field.split(',').map((part): ((date: Date) => boolean) => {
    const upper = part.toUpperCase();
    const last = /^(\w+)L$/.exec(upper);
    if (last && upper !== 'L') {
      const weekday = weekdayValue(last[1]!, part);
      return (date) => date.getUTCDay() === weekday && date.getUTCDate() + 7 > daysInMonth(date);
    }
    const nth = /^(\w+)#(\d)$/.exec(upper);
    if (nth) {
      const weekday = weekdayValue(nth[1]!, part);
      const k = Number(nth[2]);
      if (k < 1 || k > 5) throw new CronSyntaxError(`day-of-week "${part}": the week after # must be 1-5`);
      return (date) => date.getUTCDay() === weekday && Math.ceil(date.getUTCDate() / 7) === k;
    }
    if (upper === 'L') return (date) => date.getUTCDay() === 6;
    // 1-7 with 1 = Sunday; 0 is Sunday too. Values are mapped to JavaScript's 0 = Sunday.
    const values = parseSet(part, 0, 7, 'day-of-week', WEEKDAYS, 1);
    const days = new Set([...values].map((v) => (v === 0 ? 0 : v - 1)));
    return (date) => days.has(date.getUTCDay());
  });
  return (date) => parts.some((matches) => matches(date));
}

/** A single weekday (number 0-7 or name) as JavaScript's 0 = Sunday. */
function weekdayValue(token: string, part: string): number {
  const named = WEEKDAYS.indexOf(token);
  if (named >= 0) return named;
  if (!/^\d$/.test(token) || Number(token) > 7) throw new CronSyntaxError(`day-of-week "${part}" is not valid`);
  const value = Number(token);
  return value === 0 ? 0 : value - 1;
}

/**
 * One field of plain values: `*`, `n`, `a-b`, `* /n`, `a/n`, `a-b/n`, comma lists. `names[i]` stands for
 * value `i + nameBase` (JAN = 1, SUN = 1).
 */
function parseSet(
  field: string,
  min: number,
  max: number,
  what: string,
  names: string[] = [],
  nameBase = 0,
): Set<number> {
  const values = new Set<number>();
  const value = (token: string, part: string): number => {
    const named = names.indexOf(token.toUpperCase());
    if (named >= 0) return named + nameBase;
    if (!/^\d{1,2}$/.test(token)) throw new CronSyntaxError(`${what} "${part}" is not valid`);
    const n = Number(token);
    if (n < min || n > max) throw new CronSyntaxError(`${what} "${part}" is out of range (${min}-${max})`);
    return n;
  };
  for (const part of field.split(',')) {
    const match = /^([^/]+)(?:\/(\d{1,2}))?$/.exec(part);
    if (!match) throw new CronSyntaxError(`${what} "${part}" is not valid`);
    const [, range, stepText] = match as unknown as [string, string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw new CronSyntaxError(`${what} "${part}": the step must be at least 1`);
    let from: number;
    let to: number;
    if (range === '*') [from, to] = [min, max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-');
      [from, to] = [value(a ?? '', part), value(b ?? '', part)];
      if (from > to) throw new CronSyntaxError(`${what} "${part}": the range is backwards`);
    } else {
      from = value(range, part);
      to = stepText === undefined ? from : max;
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}
