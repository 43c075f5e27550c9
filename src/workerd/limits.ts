import { DEFAULT_CPU_MS } from './script.ts';
import type { ScriptToRun } from './script.ts';

/**
 * Memory one isolate may use, as on Cloudflare (128 MB per isolate). workerd takes it as V8's old
 * generation limit (`--max-old-space-size`, set per process and applied to each isolate): a script that
 * outgrows it makes V8 abort the process, which the supervisor restarts.
 */
export const ISOLATE_MEMORY_MIB = 128;
/**
 * What a process may hold beyond its isolates' heaps before the watchdog kills it: I/O buffers, the
 * C++ objects behind requests that only a full collection frees (~185 MiB per process under
 * bench/functions' load, with ~55 MiB idle), code. Memory outside the V8 heap (ArrayBuffers) is only
 * bounded by this resident-size check.
 */
export const PROCESS_HEADROOM_MIB = 128;
const MIB = 1024 * 1024;

/** The limits the watchdog applies to one workerd process, which runs one script (one isolate). */
export interface ProcessLimits {
  /** CPU time the process may spend without answering a ping: the script's cpu_ms. */
  cpuMs: number;
  /** Resident memory allowed above what the process used once ready. */
  memoryBytes: number;
}

/** A script's own limits, whatever else its account runs: its cpu_ms, and one isolate's memory plus headroom. */
export function limitsFor(script: ScriptToRun): ProcessLimits {
  return {
    cpuMs: script.version.cpu_ms ?? DEFAULT_CPU_MS,
    memoryBytes: (ISOLATE_MEMORY_MIB + PROCESS_HEADROOM_MIB) * MIB,
  };
}

/**
 * Subrequests one invocation may make: Cloudflare's limit on paid plans ("Subrequests: 10,000/request",
 * developers.cloudflare.com/workers/platform/limits). LEDGE_SUBREQUESTS_PER_INVOCATION changes it; the count
 * is kept inside workerd (isolate/subrequests.ts).
 */
export const DEFAULT_SUBREQUESTS_PER_INVOCATION = 10_000;
