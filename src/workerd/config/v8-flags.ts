import { ISOLATE_MEMORY_MIB } from '../limits.ts';

/**
 * V8 flags for workerd. The stalls that set GET 1 KiB's p99 are full collections: the C++ objects behind
 * each request (requests, headers, R2 results, I/O contexts) are only freed by a full collection, whose
 * pause grows with the garbage it finalizes (~4-5 ms per MB of heap, --trace-gc-nvp; V8's own phases are
 * a tenth of it). Measured with bench/functions (docs/benchmarks-history.md, 2026-11-22):
 * - `--initial-heap-size=2`: the first full collection otherwise waits for the initial 32 MiB limit and
 *   then stalls each isolate 180-400 ms, 10-40 s into a load (p99 130-215 ms in that 10 s round). With
 *   it, every full collection happens at ~10 MB of heap: 30-60 ms.
 * - `--optimize-for-size`: V8's conservative heap growth; pauses a little shorter again (p99 39-46 ms
 *   against 37-61 ms without it, alternating runs), throughput unchanged.
 * - `--minor-ms` (2026-11-26): young collections by mark-sweep instead of the copying scavenger. With the
 *   scavenger the remaining stalls were full collections that began by finishing the C++ heap's sweep on
 *   the main thread: the destructors of every Response, Headers and stream since the one before, 40-60 ms
 *   in one piece every ~0.7 s per process under load (perf samples aligned with a client's stalled
 *   requests). With mark-sweep young collections p99 at wrk -c32 went from 28.4 to 13.1 ms for GET 1 KiB,
 *   22.4 to 13.5 for head() and 19.7 to 11.1 for list(), with req/s within the noise (-3.9% to +4.2%) and
 *   ~17% less RSS per process under load (docs/benchmarks.md, "Functions: small requests").
 * - `--max-semi-space-size=8`: the young generation's limit. 2 MiB suited the scavenger (a process settled
 *   at ~185 MiB instead of ~310 MiB under load, 2026-11-22); with mark-sweep young collections a 2 MiB one
 *   collected so often that head() and list() lost 14% of their req/s, and 8 MiB keeps them level.
 * The front processes (which run only the entry router) get these alone; processes that run functions
 * also get the per-isolate heap limit below.
 */
export const WORKERD_V8_FLAGS = [
  '--max-semi-space-size=8',
  '--initial-heap-size=2',
  '--optimize-for-size',
  '--minor-ms',
];
/** Processes that run functions also cap each isolate's heap (see limits.ts). */
export const FUNCTION_V8_FLAGS = [...WORKERD_V8_FLAGS, `--max-old-space-size=${ISOLATE_MEMORY_MIB}`];
