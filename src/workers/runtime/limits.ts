import { DEFAULT_CPU_MS } from '../schemas.ts';
import type { DeployedScript } from '../types.ts';

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

/** The limits the watchdog applies to one workerd process that runs `scripts`. */
export interface ProcessLimits {
  /** CPU time the process may spend without answering a ping: the largest cpu_ms of its scripts. */
  cpuMs: number;
  /** Resident memory allowed above what the process used once ready. */
  memoryBytes: number;
}

export function limitsFor(scripts: readonly DeployedScript[]): ProcessLimits {
  const cpuMs = scripts.length ? Math.max(...scripts.map((s) => s.version.cpu_ms ?? DEFAULT_CPU_MS)) : DEFAULT_CPU_MS;
  return {
    cpuMs,
    memoryBytes: (Math.max(scripts.length, 1) * ISOLATE_MEMORY_MIB + PROCESS_HEADROOM_MIB) * MIB,
  };
}
