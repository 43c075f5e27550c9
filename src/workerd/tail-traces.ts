import { EventEmitter } from 'node:events';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TAIL_FLAG_FILE, TAIL_FLAG_PEER, TRACE_MARKER } from './isolate/contract.ts';
import { WatchCounts } from './watch-counts.ts';
import type { Clock } from '../shared/clock.ts';

/** One console call as a tail event carries it (Cloudflare's TailEventMessage `logs[]`). */
export interface TailLog {
  message: unknown[];
  level: string;
  timestamp: number;
}

/** One uncaught exception (Cloudflare's TailEventMessage `exceptions[]`). */
export interface TailException {
  name: string;
  message: string;
  stack?: string | undefined;
  timestamp: number;
}

export interface TailRequestEvent {
  request: { url: string; method: string; headers: Record<string, string>; cf: Record<string, unknown> };
  response?: { status: number };
}

export interface TailScheduledEvent {
  cron: string;
  scheduledTime: number;
}

export type TailOutcome = 'ok' | 'exception' | 'exceededCpu' | 'exceededMemory' | 'canceled' | 'unknown';

/** One request of a function as `wrangler tail` receives it (its TailEventMessage). */
export interface TailEvent {
  outcome: TailOutcome;
  scriptName: string;
  exceptions: TailException[];
  logs: TailLog[];
  eventTimestamp: number;
  /** A request (fetch), or a Cron Trigger run as Cloudflare's tail shows it (`{ cron, scheduledTime }`). */
  event: TailRequestEvent | TailScheduledEvent;
  /** Milliseconds from the request's start to its end, as the isolate's clock saw them (it advances on I/O). */
  wallTime: number;
  diagnosticsChannelEvents: [];
  truncated: boolean;
  executionModel: 'stateless';
}

/** A process as far as traces need it: it may exit, killed by the watchdog for a limit. */
export interface TraceSource {
  /**
   * Resolves once the process exited and all its lines were ingested: a start line still in the pipe
   * when it exited must be read first, or the killed request would go unreported.
   */
  readonly outputEnded: Promise<unknown>;
  readonly limitExceeded: 'cpu' | 'memory' | undefined;
}

interface Pending {
  accountId: string;
  script: string;
  method: string;
  url: string;
  eventTimestamp: number;
  source: TraceSource | undefined;
  /** Its isolate said it ended (a later start line named it); its end line may still be on its way. */
  ended: boolean;
}

/**
 * One traced request as its listeners get it: the JSON text as workerd wrote it (sent on as it is) and,
 * parsed only when a listener needs to look inside (filters), the event.
 */
export class TracedRequest {
  readonly json: string;
  /** Served by another node's workerd and relayed here (never relayed on again). */
  readonly relayed: boolean;
  #event: TailEvent | undefined;
  #bytes: Buffer | undefined;

  constructor(json: string, event?: TailEvent, relayed = false) {
    this.json = json;
    this.#event = event;
    this.relayed = relayed;
  }

  get event(): TailEvent {
    return (this.#event ??= JSON.parse(this.json) as TailEvent);
  }

  /** The JSON as UTF-8, encoded once however many sessions send it. */
  get bytes(): Buffer {
    return (this.#bytes ??= Buffer.from(this.json));
  }
}

/**
 * The directory of one script's tail flag (`<flagsDir>/<account>/<script>/`). Each script's isolates get a
 * read-only disk service rooted here and nowhere else, so a function cannot read (or list) which other
 * scripts, of its account or any other, are tailed. Account ids and script names are validated ids
 * (hex, `[a-z0-9-]`), never `.` or `..`.
 */
export function scriptFlagDir(flagsDir: string, accountId: string, script: string): string {
  return join(flagsDir, accountId, script);
}

/**
 * The requests traced for tail sessions. It sets the per-script flags that turn tracing on in the isolates
 * (`<flagsDir>/<account>/<script>/flag`, read by the trace shim through a disk service of its own: no
 * workerd restart), pairs the
 * start and end lines workerd writes for each request into one TailEvent, and publishes it to the
 * script's listeners. A request whose process dies before its end line (the watchdog's CPU or memory kill)
 * is published when the process exits, with the limit as its outcome.
 */
export class TailTraces {
  readonly flagsDir: string;
  readonly #events = new EventEmitter();
  readonly #pending = new Map<string, Pending>();
  readonly #watched = new WeakSet<TraceSource>();
  /**
   * Why each traced script is traced (`sessions` here, `remote` for another node's sessions), and whether
   * that reason needs the client's peer address in the events (a `--ip` filter).
   */
  readonly #tracedFor = new Map<string, Map<string, boolean>>();
  readonly #watchers = new WatchCounts();
  /** Scripts watched here: a watcher subscribed, or a session created whose client has not connected yet. */
  readonly #watchedNow = new Set<string>();
  #onWatch: ((accountId: string, script: string, watched: boolean) => void) | undefined;

  readonly #clock: Clock;

  constructor(runtimeDir: string, clock: Clock) {
    this.#clock = clock;
    this.flagsDir = join(runtimeDir, 'tail-flags');
    // Flags of a previous run are stale: nobody tails anything yet.
    rmSync(this.flagsDir, { recursive: true, force: true });
    mkdirSync(this.flagsDir, { recursive: true, mode: 0o700 });
    this.#events.setMaxListeners(0);
  }

  /**
   * Turns tracing of a script on or off for `reason` (isolates notice within TAIL_FLAG_TTL_MS): it stays on
   * while any reason wants it (this node's sessions, another node's). With `peerAddress`, the events carry
   * workerd's peer address in \`cf.clientIp\` (the flag file says \`peer\`), which costs each traced request
   * workerd's parse of its cf blob: only while a session filters by client address.
   */
  setTraced(accountId: string, script: string, on: boolean, reason = 'sessions', peerAddress = false): void {
    const key = `${accountId}/${script}`;
    const reasons = this.#tracedFor.get(key) ?? new Map<string, boolean>();
    if (on) reasons.set(reason, peerAddress);
    else reasons.delete(reason);
    if (reasons.size > 0) this.#tracedFor.set(key, reasons);
    else this.#tracedFor.delete(key);
    this.#updateWatch(accountId, script);
    const dir = scriptFlagDir(this.flagsDir, accountId, script);
    if (reasons.size > 0) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const flag = [...reasons.values()].some(Boolean) ? TAIL_FLAG_PEER : '1';
      writeFileSync(join(dir, TAIL_FLAG_FILE), flag, { mode: 0o600 });
    } else {
      rmSync(join(dir, TAIL_FLAG_FILE), { force: true });
      // A request whose client went away never writes its end line: nobody waits for those any more.
      for (const [id, pending] of this.#pending)
        if (pending.accountId === accountId && pending.script === script) this.#pending.delete(id);
    }
  }

  /**
   * Takes one line of workerd stdout; returns false when it is not a trace line. Lines (isolate/trace.ts):
   * `<marker><account> <script> s <id> <ended ids|-> <method> <url>` and
   * `<marker><account> <script> e <id> <json>`.
   */
  ingestLine(line: string, source?: TraceSource): boolean {
    const at = line.indexOf(TRACE_MARKER);
    if (at < 0) return false;
    // The four head fields by indexOf: the rest of an end line is a whole event, which needs no cutting.
    const head: string[] = [];
    let from = at + TRACE_MARKER.length;
    while (head.length < 4) {
      const space = line.indexOf(' ', from);
      if (space <= from) return true;
      head.push(line.slice(from, space));
      from = space + 1;
    }
    const [accountId, script, kind, id] = head as [string, string, string, string];
    const rest = line.slice(from);
    if (kind === 's') {
      const afterEnded = rest.indexOf(' ');
      const afterMethod = rest.indexOf(' ', afterEnded + 1);
      if (afterEnded < 0 || afterMethod < 0) return true;
      const ended = rest.slice(0, afterEnded);
      if (ended !== '-') this.#markEnded(ended);
      this.#pending.set(id, {
        accountId,
        script,
        method: rest.slice(afterEnded + 1, afterMethod),
        url: rest.slice(afterMethod + 1),
        eventTimestamp: this.#clock.now(),
        source,
        ended: false,
      });
      if (source && !this.#watched.has(source)) {
        this.#watched.add(source);
        void source.outputEnded.then(() => this.#sourceExited(source));
      }
    } else if (kind === 'e' && this.#pending.delete(id)) {
      this.#events.emit(`${accountId}/${script}`, new TracedRequest(rest));
    }
    return true;
  }

  #markEnded(ids: string): void {
    for (const id of ids.split(',')) {
      const pending = this.#pending.get(id);
      if (pending) pending.ended = true;
    }
  }

  /** A watcher (a tail session): gets this node's traced requests of the script and those relayed to it. */
  subscribe(accountId: string, script: string, listener: (request: TracedRequest) => void): () => void {
    const key = `${accountId}/${script}`;
    this.#events.on(key, listener);
    return this.#watchers.watch(
      key,
      () => this.#events.off(key, listener),
      () => this.#updateWatch(accountId, script),
    );
  }

  /** Tells onWatch when a script starts or stops being watched here (sessions count from their creation). */
  #updateWatch(accountId: string, script: string): void {
    const key = `${accountId}/${script}`;
    const watched = this.#watchers.has(key) || this.#tracedFor.get(key)?.has('sessions') === true;
    if (watched === this.#watchedNow.has(key)) return;
    if (watched) this.#watchedNow.add(key);
    else this.#watchedNow.delete(key);
    this.#onWatch?.(accountId, script, watched);
  }

  /** Like subscribe, for the relay to other nodes: not a watcher here (no onWatch), relayed requests included. */
  listen(accountId: string, script: string, listener: (request: TracedRequest) => void): () => void {
    const key = `${accountId}/${script}`;
    this.#events.on(key, listener);
    return () => this.#events.off(key, listener);
  }

  /** Told when a script gains its first or loses its last watcher here (the cluster relay asks other nodes). */
  onWatch(listener: (accountId: string, script: string, watched: boolean) => void): void {
    this.#onWatch = listener;
  }

  /** Scripts watched here now, as `[accountId, script]`. */
  watchedScripts(): Array<[string, string]> {
    return [...this.#watchedNow].map((key) => key.split('/', 2) as [string, string]);
  }

  /** An event made here rather than traced in workerd (a Cron Trigger run), for the script's watchers. */
  publish(accountId: string, script: string, event: TailEvent): void {
    this.#events.emit(`${accountId}/${script}`, new TracedRequest(JSON.stringify(event), event));
  }

  /** A traced request another node's workerd served, for this node's watchers. */
  relay(accountId: string, script: string, json: string): void {
    this.#events.emit(`${accountId}/${script}`, new TracedRequest(json, undefined, true));
  }

  /** Requests started but not ended (tests check nothing leaks). */
  get pendingCount(): number {
    return this.#pending.size;
  }

  #sourceExited(source: TraceSource): void {
    const outcome: TailOutcome =
      source.limitExceeded === 'cpu'
        ? 'exceededCpu'
        : source.limitExceeded === 'memory'
          ? 'exceededMemory'
          : 'canceled';
    for (const [id, pending] of this.#pending) {
      if (pending.source !== source) continue;
      this.#pending.delete(id);
      // It finished before the kill, but its end line (its status, logs) was still queued in the process:
      // not reported, rather than reported as killed.
      if (pending.ended) continue;
      const event: TailEvent = {
        outcome,
        scriptName: pending.script,
        exceptions: [],
        logs: [],
        eventTimestamp: pending.eventTimestamp,
        event: { request: { url: pending.url, method: pending.method, headers: {}, cf: {} } },
        wallTime: this.#clock.now() - pending.eventTimestamp,
        diagnosticsChannelEvents: [],
        truncated: false,
        executionModel: 'stateless',
      };
      this.#events.emit(`${pending.accountId}/${pending.script}`, new TracedRequest(JSON.stringify(event), event));
    }
  }
}
