import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cleanEnv, CLI_ENTRY, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { WRANGLER_ENTRY } from '../helpers/wrangler.ts';
import { poll } from '../helpers/wait.ts';

/** A long-running tail client (real wrangler or `ledge tail`) whose output lines are collected. */
export interface RunningTail {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Waits until a stdout line satisfies `match`; fails with everything printed so far. */
  waitFor(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** JSON stdout lines parsed (wrangler --format json prints one event per line). */
  events(): Record<string, unknown>[];
  /**
   * Waits until a whole event (all of its lines printed) satisfies `match`. Each session gets its events in
   * request order, so once a request's event is here, every earlier one the session selected is too.
   */
  waitForEvent(match: (event: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function collect(child: ChildProcess): RunningTail {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout.push(line);
    for (const wake of waiters) wake();
  });
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stdout,
    stderr,
    waitFor(match, timeoutMs = 45_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.find(match);
          if (found === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching line in time; stdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    events() {
      return wranglerJsonEvents(stdout.join('\n'));
    },
    async waitForEvent(match, timeoutMs) {
      // Checked on each new line: the text so far must hold a whole event that matches.
      await this.waitFor(() => wranglerJsonEvents(stdout.join('\n')).some(match), timeoutMs);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** wrangler's --format json prints each event pretty-printed over several lines: split the objects. */
export function wranglerJsonEvents(text: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth++ === 0) start = i;
    } else if (ch === '}' && --depth === 0)
      events.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
  }
  return events;
}

/** Starts the real `wrangler tail` against Ledge (with the owner's token unless given another). */
export function startWranglerTail(ledge: TestLedge, args: string[], apiToken = ledge.apiToken): RunningTail {
  const home = tempDir('wrangler-home-');
  const child = spawn(process.execPath, [WRANGLER_ENTRY, 'tail', ...args], {
    cwd: tempDir('wrangler-cwd-'),
    env: {
      ...cleanEnv(),
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      CLOUDFLARE_API_BASE_URL: ledge.apiUrl,
      CLOUDFLARE_API_TOKEN: apiToken,
      CLOUDFLARE_ACCOUNT_ID: ledge.accountId,
      WRANGLER_SEND_METRICS: 'false',
      WRANGLER_HIDE_BANNER: 'true',
      NO_COLOR: '1',
      CI: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** Starts `ledge tail` (the real CLI) against Ledge (with the owner's token unless given another). */
export function startLedgeTail(ledge: TestLedge, args: string[], apiToken = ledge.apiToken): RunningTail {
  const child = spawn(process.execPath, [CLI_ENTRY, 'tail', ...args], {
    cwd: tempDir('ledge-tail-cwd-'),
    env: {
      ...cleanEnv(),
      HOME: tempDir('ledge-tail-home-'),
      LEDGE_API_URL: ledge.apiUrl,
      LEDGE_API_TOKEN: apiToken,
      LEDGE_ACCOUNT_ID: ledge.accountId,
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** Waits until the server has `count` connected tail sessions for the script (wrangler --format json says nothing). */
export async function waitForSessions(
  ledge: TestLedge,
  count: number,
  timeoutMs = 45_000,
  clients?: RunningTail[],
): Promise<void> {
  const tails = ledge.server.platform.functions.tails;
  if (await poll(() => tails.connectedCount >= count, { timeoutMs })) return;
  throw new Error(
    `expected ${count} connected tail sessions, have ${tails.connectedCount}\n${(clients ?? []).map((c) => c.stderr.join('\n')).join('\n')}`,
  );
}
