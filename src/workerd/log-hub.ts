import { EventEmitter } from 'node:events';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LOG_MARKER } from './isolate/contract.ts';
import { ScriptLogFile } from './log-file.ts';
import type { Clock } from '../shared/clock.ts';
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
  /** The last `count` lines of a script, oldest first, as NDJSON text in pages. */
  tail(accountId: string, script: string, count: number): AsyncIterable<string>;
}

/**
 * What the tag of a console line may name: the shim writes the account id and script name, and a line
 * that names anything else (a path, above all) is not a function's console line.
 */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Keeps the console output of functions: appended to `<logs>/workers/<account>/<script>.log` (JSON
 * lines, rotated, see log-file.ts) and pushed to live subscribers (`ledge tail`). Lines come from
 * workerd's stdout.
 */
export class FunctionLogHub {
  /** A background service only to write the last lines once the runtime stopped (subsystem.ts). */
  readonly name = 'function-log-files';
  readonly #dir: string;
  readonly #events = new EventEmitter();
  readonly #watchers = new WatchCounts();
  readonly #files = new Map<string, ScriptLogFile>();
  readonly #onError: (error: unknown) => void;
  readonly #clock: Clock;
  #onWatch: ((accountId: string, script: string, watched: boolean) => void) | undefined;
  #shared: SharedHistory | undefined;

  constructor(logsDir: string, onError: (error: unknown) => void, clock: Clock) {
    this.#dir = join(logsDir, 'workers');
    this.#onError = onError;
    this.#clock = clock;
    this.#events.setMaxListeners(0);
  }

  start(): void {}

  stop(): Promise<void> {
    return this.flush();
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
      if (!NAME.test(entry.a) || !NAME.test(entry.s)) return false;
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
    this.#file(accountId, script).append(`${JSON.stringify(line)}\n`);
    this.#shared?.add(accountId, script, line);
    this.#events.emit(`${accountId}/${script}`, line, false);
  }

  /** With several nodes on one database, lines are also kept there, and the history is read from there. */
  shareHistory(shared: SharedHistory): void {
    this.#shared = shared;
  }

  /**
   * The last `count` lines of a script as NDJSON chunks, oldest first, read as the caller takes them (never
   * the whole history at once): of every node when the history is shared, else this node's.
   */
  async *history(accountId: string, script: string, count: number): AsyncGenerator<Uint8Array> {
    if (count <= 0) return;
    if (!this.#shared) {
      yield* this.#file(accountId, script).tail(count);
      return;
    }
    const encoder = new TextEncoder();
    for await (const text of this.#shared.tail(accountId, script, count)) yield encoder.encode(text);
  }

  /** A line another node's workerd wrote, for this node's followers (kept by that node, not here). */
  relay(accountId: string, script: string, line: FunctionLogLine): void {
    this.#events.emit(`${accountId}/${script}`, line, true);
  }

  /** The last `count` kept lines of a script, parsed (for a few lines: the history route streams them). */
  async recent(accountId: string, script: string, count: number): Promise<FunctionLogLine[]> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.history(accountId, script, count)) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as FunctionLogLine);
  }

  /** Resolves once every line recorded so far is in its file. */
  async flush(): Promise<void> {
    await Promise.all([...this.#files.values()].map((file) => file.flush()));
  }

  #file(accountId: string, script: string): ScriptLogFile {
    const key = `${accountId}/${script}`;
    let file = this.#files.get(key);
    if (!file) {
      file = new ScriptLogFile(join(this.#dir, accountId, `${script}.log`), this.#onError, this.#clock);
      this.#files.set(key, file);
    }
    return file;
  }

  /**
   * Drops the kept lines of a deleted script, the rotated file too (a new script of that name starts with no
   * history). Lines still queued for the file are written first, so none lands after the removal.
   */
  async forget(accountId: string, script: string): Promise<void> {
    const key = `${accountId}/${script}`;
    await this.#files.get(key)?.flush();
    this.#files.delete(key);
    const path = join(this.#dir, accountId, `${script}.log`);
    await Promise.all([rm(path, { force: true }), rm(`${path}.1`, { force: true })]);
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
