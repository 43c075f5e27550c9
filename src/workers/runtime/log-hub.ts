import { EventEmitter } from 'node:events';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOG_MARKER } from './console-shim.ts';

/** One console call of a deployed function. */
export interface FunctionLogLine {
  time: string;
  level: string;
  message: string[];
}

/**
 * Keeps the console output of functions: appended to `<logs>/workers/<account>/<script>.log` (JSON
 * lines) and pushed to live subscribers (`ledge tail`). Lines come from workerd's stdout.
 */
export class FunctionLogHub {
  readonly #dir: string;
  readonly #events = new EventEmitter();

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
    this.#events.emit(`${accountId}/${script}`, line);
  }

  /** The last `count` kept lines of a script. */
  recent(accountId: string, script: string, count: number): FunctionLogLine[] {
    const path = join(this.#dir, accountId, `${script}.log`);
    if (count <= 0 || !existsSync(path)) return [];
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').filter(Boolean).slice(-count);
    return lines.map((l) => JSON.parse(l) as FunctionLogLine);
  }

  subscribe(accountId: string, script: string, listener: (line: FunctionLogLine) => void): () => void {
    const key = `${accountId}/${script}`;
    this.#events.on(key, listener);
    return () => this.#events.off(key, listener);
  }
}
