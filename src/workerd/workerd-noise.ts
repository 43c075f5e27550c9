/**
 * workerd's own diagnostics that say nothing to a Ledge user: internal warnings it marks NOSENTRY (not
 * worth reporting), e.g. on every start "per-isolate bootstrap compile cache failed its compatibility
 * check; scripts will be compiled from source". They go to the debug log; everything else workerd
 * writes to stderr (script errors, uncaught exceptions, real failures) stays a warning.
 */
const NOISE = [/^workerd\/\S+:\d+: (?:info|warning): NOSENTRY /];

export function isWorkerdNoise(line: string): boolean {
  return NOISE.some((pattern) => pattern.test(line));
}
