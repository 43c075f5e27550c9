import type { Clock } from './clock.ts';

/** Timestamps as the v4 API renders them (RFC 3339 with milliseconds, UTC): now on `clock`. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
