import { EventEmitter } from 'node:events';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_MARKER } from './console-shim.ts';
import { WatchCounts } from './watch-counts.ts';

/** One console call of a deployed function. */
export interface FunctionLogLine {
  time: string;
  level: string;
  message: string[];
}

/** Where the history lives when nodes share a database (see workers/log-history.ts). */
export interface SharedHistory {
  add(accountId: string, script: string, line: FunctionLogLine): void;
  recent(accountId: string, script: string, count: number): Promise<FunctionLogLine[]>;
}

/**
 * Keeps the console output of functions: appended to `<logs>/workers/<account>/<script>.log` (JSON
 * lines) and pushed to live subscribers (`ledge tail`). Lines come from workerd's stdout.
 */
export class FunctionLogHub {
  readonly #dir: string;
  readonly #events = new EventEmitter();
  readonly #watchers = new WatchCounts();
  #onWatch: ((accountId: string, script: string, watched: boolean) => void) | undefined;
  #shared: SharedHistory | undefined;

  constructor(logsDir: string) {
    this.#dir = join(logsDir, 'workers');
    this.#events.setMaxListeners(0);
  }

  /** Takes one line of workerd stdout; returns false when it is not a function's console line. */
  ingestLine(line: string): boolean {
    const at = line.indexOf(LOG_MARKER);
    if (at < 0) return false;
    try {
      const entry = JSON.parse(line.slice(at + LOG_MARKER.length)) as {
        a: string;
        s: string;
        level: string;
        time: number;
        message: string[];
      };
      this.record(entry.a, entry.s, {
        time: new Date(entry.time).toISOString(),
        level: entry.level,
        message: entry.message,
      });
      return true;
    } catch {
      return false;
    }
  }

  record(accountId: string, script: string, line: FunctionLogLine): void {
    const dir = join(this.#dir, accountId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(join(dir, `${script}.log`), `${JSON.stringify(line)}\n`, { mode: 0o600 });
    this.#shared?.add(accountId, script, line);
    this.#events.emit(`${accountId}/${script}`, line, false);
  }

  /** With several nodes on one database, lines are also kept there, and the history is read from there. */
  shareHistory(shared: SharedHistory): void {
    this.#shared = shared;
  }

  /** The last `count` lines of a script: of every node when the history is shared, else this node's. */
  async history(accountId: string, script: string, count: number): Promise<FunctionLogLine[]> {
    if (count <= 0) return [];
    return this.#shared ? this.#shared.recent(accountId, script, count) : this.recent(accountId, script, count);
  }

  /** A line another node's workerd wrote, for this node's followers (kept by that node, not here). */
  relay(accountId: string, script: string, line: FunctionLogLine): void {
    this.#events.emit(`${accountId}/${script}`, line, true);
  }

  /** The last `count` kept lines of a script. */
  recent(accountId: string, script: string, count: number): FunctionLogLine[] {
    const path = join(this.#dir, accountId, `${script}.log`);
    if (count <= 0 || !existsSync(path)) return [];
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').filter(Boolean).slice(-count);
    return lines.map((l) => JSON.parse(l) as FunctionLogLine);
  }

  /** Drops the kept lines of a deleted script (a new script of that name starts with no history). */
  forget(accountId: string, script: string): void {
    rmSync(join(this.#dir, accountId, `${script}.log`), { force: true });
  }

  /** A follower (`ledge tail`): gets this node's lines of the script and those relayed from other nodes. */
  subscribe(accountId: string, script: string, listener: (line: FunctionLogLine) => void): () => void {
    const key = `${accountId}/${script}`;
    this.#events.on(key, listener);
    return this.#watchers.watch(
      key,
      () => this.#events.off(key, listener),
      (watched) => this.#onWatch?.(accountId, script, watched),
    );
  }

  /** This node's own lines of the script, for the relay to other nodes (not a follower here). */
  listenLocal(accountId: string, script: string, listener: (line: FunctionLogLine) => void): () => void {
    const key = `${accountId}/${script}`;
    const local = (line: FunctionLogLine, relayed: boolean) => {
      if (!relayed) listener(line);
    };
    this.#events.on(key, local);
    return () => this.#events.off(key, local);
  }

  /** Told when a script gains its first or loses its last follower here. */
  onWatch(listener: (accountId: string, script: string, watched: boolean) => void): void {
    this.#onWatch = listener;
  }

  /** Scripts followed here now, as `[accountId, script]`. */
  watchedScripts(): Array<[string, string]> {
    return [...this.#watchers.keys()].map((key) => key.split('/', 2) as [string, string]);
  }
}
