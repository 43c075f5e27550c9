/**
 * Bounds on what a function's console output costs the server (docs/security.md, "Function logs").
 *
 * Cloudflare's Workers Logs keeps at most 256 KB of log events per invocation ("Maximum log size", and the
 * 2025-04-07 changelog that raised it from 128 KB): past it, the rest of the invocation is not recorded. It
 * bounds an account by count (5 billion logs a day) and time (3 days free, 7 paid). One host needs a bound in
 * bytes too, so a script's kept history is rotated: its file is renamed once it passes LOG_FILE_BYTES and one
 * rotated file is kept, at most 2 x LOG_FILE_BYTES of history per script (about 160,000 lines of 100 bytes,
 * more than the 99,999 a history read asks for).
 */
// The per-invocation budget and the ambient window are enforced inside workerd (isolate/console.ts).
export { AMBIENT_LOG_WINDOW_MS, LOG_BYTES_PER_INVOCATION } from './isolate/contract.ts';
/** A script's log file is rotated (to `<script>.log.1`, replacing the older one) past this size. */
export const LOG_FILE_BYTES = 8 * 1024 * 1024;
/**
 * Lines of one script waiting for the disk beyond this are dropped (and counted in a note line): a disk
 * slower than a tenant's output must not grow the server's memory.
 */
export const LOG_PENDING_BYTES = 4 * 1024 * 1024;
/**
 * The longest stdout line taken from workerd: a console line is at most LOG_BYTES_PER_INVOCATION, a trace
 * end line that plus the request's headers. Longer ones (output that did not go through the shim) are dropped
 * without being held in memory whole.
 */
export const MAX_STDOUT_LINE = 4 * 1024 * 1024;
