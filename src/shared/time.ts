/** Timestamps as the v4 API renders them (RFC 3339 with milliseconds, UTC). */
export function isoNow(): string {
  return new Date().toISOString();
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
