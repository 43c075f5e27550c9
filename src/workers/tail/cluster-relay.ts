import type { Cluster } from '../../cluster/index.ts';
import type { Logger } from '../../shared/logger.ts';
import type { FunctionLogHub, FunctionLogLine, TailEvent, TailTraces } from '../../workerd/index.ts';
import type { Clock } from '../../shared/clock.ts';

const WATCH = 'tail_watch';
const RELAY = 'tail_relay';
/** Watching nodes say so again this often; a want not heard of for EXPIRE_MS is dropped (its node died). */
const REFRESH_MS = 10_000;
const EXPIRE_MS = 3 * REFRESH_MS;
/** A notice carries at most 8000 bytes: larger events are cut down and flagged `truncated`, as Cloudflare does. */
const MAX_NOTICE_BYTES = 7_600;

interface Want {
  /** Node id -> when its want lapses. */
  nodes: Map<string, number>;
  stop: () => void;
}

interface RelayNotice {
  to: string;
  a: string;
  s: string;
  /** `t`: a traced request (a TailEvent); `l`: a console line. */
  k: 't' | 'l';
  d: unknown;
}

/**
 * `wrangler tail`, `ledge tail` and followed logs on any node see every node's requests: a node whose client
 * watches a script asks the others (tail_watch), each of them traces that script in its own workerd and sends
 * its events to the asking node over the change feed (tail_relay), where they reach the local watchers as
 * if served here. Relayed events are never relayed on, and a node's want lapses unless renewed, so a dead
 * node's scripts stop being traced elsewhere.
 */
export class TailRelay {
  readonly #cluster: Cluster;
  readonly #traces: TailTraces;
  readonly #logs: FunctionLogHub;
  readonly #logger: Logger;
  readonly #wants = new Map<string, Want>();

  readonly #clock: Clock;

  constructor(deps: { cluster: Cluster; traces: TailTraces; logs: FunctionLogHub; logger: Logger }, clock: Clock) {
    this.#clock = clock;
    this.#cluster = deps.cluster;
    this.#traces = deps.traces;
    this.#logs = deps.logs;
    this.#logger = deps.logger;
    deps.traces.onWatch((accountId, script, on) => this.#announceWatch(accountId, script, on));
    deps.logs.onWatch((accountId, script, on) => this.#announceWatch(accountId, script, on));
    deps.cluster.feed.subscribe((change) => {
      if (change.origin === deps.cluster.nodeId) return;
      try {
        if (change.topic === WATCH) this.#heardWatch(change.origin, change.key);
        else if (change.topic === RELAY) this.#heardRelay(change.key);
      } catch (error) {
        this.#logger.warn('ignored a malformed tail notice', { err: error });
      }
    });
    const timer = setInterval(() => this.#refresh(), REFRESH_MS);
    timer.unref();
  }

  #announceWatch(accountId: string, script: string, on: boolean): void {
    // Still watched through the other kind of watcher (a session and a log follower): not off yet.
    if (!on && this.#watchedHere(accountId, script)) return;
    this.#cluster.announce(WATCH, JSON.stringify([accountId, script, on ? 1 : 0]));
  }

  #watchedHere(accountId: string, script: string): boolean {
    const same = ([a, s]: [string, string]) => a === accountId && s === script;
    return this.#traces.watchedScripts().some(same) || this.#logs.watchedScripts().some(same);
  }

  #refresh(): void {
    const seen = new Set<string>();
    for (const [accountId, script] of [...this.#traces.watchedScripts(), ...this.#logs.watchedScripts()]) {
      const key = `${accountId}/${script}`;
      if (seen.has(key)) continue;
      seen.add(key);
      this.#announceWatch(accountId, script, true);
    }
    const now = this.#clock.now();
    for (const [key, want] of this.#wants) {
      for (const [node, lapses] of want.nodes) if (lapses <= now) want.nodes.delete(node);
      if (want.nodes.size === 0) this.#drop(key, want);
    }
  }

  #heardWatch(node: string, key: string): void {
    const [accountId, script, on] = JSON.parse(key) as [string, string, number];
    if (typeof accountId !== 'string' || typeof script !== 'string') return;
    const wantKey = `${accountId}/${script}`;
    let want = this.#wants.get(wantKey);
    if (!on) {
      want?.nodes.delete(node);
      if (want && want.nodes.size === 0) this.#drop(wantKey, want);
      return;
    }
    if (!want) {
      const stopTraces = this.#traces.listen(accountId, script, (request) => {
        if (!request.relayed) this.#send(accountId, script, 't', request.json);
      });
      const stopLogs = this.#logs.listenLocal(accountId, script, (line) =>
        this.#send(accountId, script, 'l', JSON.stringify(line)),
      );
      // The asking node's sessions may filter by client address (--ip), which it cannot say here: the
      // relayed events always carry the peer address.
      this.#traces.setTraced(accountId, script, true, 'remote', true);
      want = {
        nodes: new Map(),
        stop: () => {
          stopTraces();
          stopLogs();
          this.#traces.setTraced(accountId, script, false, 'remote');
        },
      };
      this.#wants.set(wantKey, want);
    }
    want.nodes.set(node, this.#clock.now() + EXPIRE_MS);
  }

  #drop(key: string, want: Want): void {
    this.#wants.delete(key);
    want.stop();
  }

  #send(accountId: string, script: string, kind: 't' | 'l', json: string): void {
    const want = this.#wants.get(`${accountId}/${script}`);
    if (!want) return;
    const data = fitNotice(kind, json);
    for (const node of want.nodes.keys()) {
      // The event's JSON goes in as it is (not as an escaped string, which could double its size).
      const head = JSON.stringify({ to: node, a: accountId, s: script, k: kind });
      this.#cluster.announce(RELAY, `${head.slice(0, -1)},"d":${data}}`);
    }
  }

  #heardRelay(key: string): void {
    const notice = JSON.parse(key) as RelayNotice;
    if (notice.to !== this.#cluster.nodeId) return;
    if (notice.k === 't') this.#traces.relay(notice.a, notice.s, JSON.stringify(notice.d));
    else this.#logs.relay(notice.a, notice.s, notice.d as FunctionLogLine);
  }
}

/** The event as JSON that fits one notice (with its envelope): logs and stacks are cut first. */
function fitNotice(kind: 't' | 'l', json: string): string {
  if (Buffer.byteLength(json) <= MAX_NOTICE_BYTES) return json;
  if (kind === 'l') {
    const line = JSON.parse(json) as FunctionLogLine;
    return JSON.stringify({ ...line, message: [cut(line.message.join(' '), MAX_NOTICE_BYTES / 2)] });
  }
  const event = JSON.parse(json) as TailEvent;
  const budget = Math.floor(MAX_NOTICE_BYTES / 8);
  const smaller: TailEvent = {
    ...event,
    truncated: true,
    logs: event.logs.slice(0, 4).map((log) => ({ ...log, message: [cut(JSON.stringify(log.message), budget)] })),
    exceptions: event.exceptions
      .slice(0, 1)
      .map((e) => ({ ...e, message: cut(e.message, budget), stack: e.stack && cut(e.stack, budget) })),
    event:
      'request' in event.event
        ? { ...event.event, request: { ...event.event.request, headers: {}, cf: {} } }
        : event.event,
  };
  const text = JSON.stringify(smaller);
  return Buffer.byteLength(text) <= MAX_NOTICE_BYTES ? text : JSON.stringify({ ...smaller, logs: [] });
}

function cut(text: string, bytes: number): string {
  return text.length <= bytes ? text : `${text.slice(0, bytes)}…`;
}
