import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestLedge } from '../helpers/ledge.ts';
import type { ManualClock } from '../helpers/manual-clock.ts';

import type { AnyJson as Json } from '../helpers/envelope.ts';
import { waitFor as waitUntil } from '../helpers/wait.ts';

export type { Json };

export interface ApiAnswer {
  status: number;
  body: Json;
}

/** Calls the load-balancing API of a test server with the bootstrap token. */
export function lbClient(ledge: TestLedge, accountId = ledge.accountId) {
  const base = `${ledge.apiUrl}/accounts/${accountId}/load_balancers`;
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = ledge.tokenHeaders,
  ): Promise<ApiAnswer> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] = 'application/json';
    }
    const res = await fetch(base + path, init);
    return { status: res.status, body: await res.json() };
  };
}

export type LbCall = ReturnType<typeof lbClient>;

/** A minimal valid pool body. */
export function poolBody(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, origins: [{ name: 'o1', address: '192.0.2.10' }], ...extra };
}

export type OriginMode =
  | { kind: 'ok'; body?: string }
  | { kind: 'status'; status: number }
  | { kind: 'body'; body: string }
  | { kind: 'hang' };

/**
 * A real loopback HTTP origin whose behaviour a test switches at run time: healthy, failing by status,
 * by body, or by never answering (timeout). `stop()` closes the listener (connection refused).
 */
export class TestOrigin {
  mode: OriginMode = { kind: 'ok' };
  readonly requests: IncomingMessage[] = [];
  readonly #server: Server;
  port = 0;

  constructor() {
    this.#server = createServer((req, res) => this.#answer(req, res));
  }

  static async start(): Promise<TestOrigin> {
    const origin = new TestOrigin();
    await origin.listen(0);
    return origin;
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.#server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(req);
    const mode = this.mode;
    if (mode.kind === 'hang') return; // never answers: the checker's timeout must fire
    if (mode.kind === 'status') {
      res.writeHead(mode.status).end('failing');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(mode.kind === 'body' ? mode.body : (mode.body ?? 'OK all good'));
  }
}

/** Polls until `check` returns a value (not undefined) or the time runs out (../helpers/wait.ts). */
export function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  return waitUntil(check, what, { timeoutMs, everyMs: 100 });
}

/**
 * Probe rounds on a test server whose checker runs on `clock` (startLedge({ clock })): `round()` moves the
 * clock one interval and waits until the probes it started are answered and recorded (real I/O, real time);
 * `untilRound(check)` runs rounds until `check` returns a value, and fails after `rounds` of them.
 */
export function probeRounds(clock: ManualClock, ledge: () => TestLedge, intervalMs = 1_000) {
  const settled = () => ledge().server.platform.loadBalancing.checker.settled();
  const round = async (): Promise<void> => {
    await clock.advance(intervalMs);
    await settled();
  };
  const untilRound = async <T>(check: () => Promise<T | undefined> | T | undefined, what: string, rounds = 30) => {
    for (let i = 0; ; i++) {
      const value = await check();
      if (value !== undefined) return value;
      if (i === rounds) throw new Error(`no ${what} after ${rounds} probe rounds`);
      await round();
    }
  };
  return { settled, round, untilRound };
}
