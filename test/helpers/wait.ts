/**
 * The one poll of the tests: waits for real I/O that a test cannot be told about (another process, a socket,
 * a file, a server's background write) by asking `check` again every `everyMs` of real time. A test of timing
 * behaviour moves a ManualClock instead (./manual-clock.ts), and a test that can await the event itself
 * (a dispatcher's or checker's settled()) does that.
 */
export interface PollOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Real time between two checks (default 50 ms). */
  everyMs?: number;
}

/** The first value `check` returns (not undefined or false), or undefined once the time is up. */
export async function poll<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: PollOptions = {},
): Promise<T | undefined> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 50));
  }
}

/** Like poll(), but fails the test naming `what` once the time is up. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  options: PollOptions = {},
): Promise<T> {
  const value = await poll(check, options);
  if (value === undefined) throw new Error(`timed out after ${options.timeoutMs ?? 15_000} ms waiting for ${what}`);
  return value;
}
