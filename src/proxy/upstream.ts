import { request, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { EgressRefusedError, type EgressPolicy } from '../egress/index.ts';
import { TrafficErrors, type ErrorAnswer } from './error-answers.ts';
import type { Endpoint } from './endpoints.ts';
import type { ProxyTarget as Target } from './route.ts';
import type { ProxySettings } from './settings.ts';

/** An attempt that ended before the origin answered. */
export interface UpstreamFailure {
  answer: ErrorAnswer;
  /** The origin was never reached (refused, timed out connecting, reset before answering): safe to retry. */
  connectionFailed: boolean;
}

/** How often an origin's IP literal is re-checked against the egress policy (own listeners can change). */
const EGRESS_RECHECK_MS = 5_000;

export interface UpstreamCallbacks {
  onResponse(response: IncomingMessage): void;
  onUpgrade?(response: IncomingMessage, socket: Socket, head: Buffer): void;
  onFailure(failure: UpstreamFailure): void;
}

/**
 * One request to one origin, with the data plane's deadlines: connecting (522), the response headers
 * (524) and the response's header size (502). Exactly one callback is called, once. The caller writes
 * the body (or ends the request) and owns the response from onResponse on.
 */
export function sendUpstream(
  target: Target,
  init: { method: string; path: string; headers: OutgoingHttpHeaders; upgrade: boolean },
  settings: ProxySettings,
  egress: EgressPolicy,
  callbacks: UpstreamCallbacks,
): ClientRequest | undefined {
  const { endpoint } = target;
  if (egressRefuses(endpoint, egress)) {
    callbacks.onFailure({ answer: TrafficErrors.egressRefused(), connectionFailed: true });
    return undefined;
  }
  let settled = false;
  let connectTimer: NodeJS.Timeout | undefined;
  const settle = () => {
    settled = true;
    clearTimeout(connectTimer);
    clearTimeout(responseTimer);
  };
  const fail = (failure: UpstreamFailure) => {
    if (settled) return;
    settle();
    callbacks.onFailure(failure);
    upstream.destroy();
  };
  const upstream = request({
    host: endpoint.address,
    port: endpoint.port,
    method: init.method,
    path: init.path,
    headers: init.headers,
    // Upgraded connections leave the pool: they get a socket of their own.
    agent: init.upgrade ? false : endpoint.agent,
    // Names are resolved through the policy, so a name that points at a refused address is not reached.
    lookup: endpoint.lookup,
    maxHeaderSize: settings.maxResponseHeaderBytes,
    setHost: false,
  });
  const responseTimer = setTimeout(
    () => fail({ answer: TrafficErrors.responseTimeout(), connectionFailed: false }),
    settings.responseTimeoutMs,
  );
  upstream.on('socket', (socket) => {
    if (!socket.connecting) return;
    connectTimer = setTimeout(
      () => fail({ answer: TrafficErrors.connectTimeout(), connectionFailed: true }),
      settings.connectTimeoutMs,
    );
    socket.once('connect', () => clearTimeout(connectTimer));
  });
  upstream.on('timeout', () => upstream.destroy(new Error('origin connection idle')));
  upstream.on('response', (response) => {
    if (settled) return void response.resume();
    settle();
    callbacks.onResponse(response);
  });
  upstream.on('upgrade', (response, socket, head) => {
    if (settled) return void socket.destroy();
    settle();
    if (callbacks.onUpgrade) callbacks.onUpgrade(response, socket, head);
    else socket.destroy();
  });
  upstream.on('error', (error: NodeJS.ErrnoException) => fail(classify(error)));
  return upstream;
}

/**
 * Whether the egress policy refuses an origin's IP literal (names are checked when resolved, through
 * `endpoint.lookup`). Checked at most every few seconds per endpoint: Ledge's own listeners can change.
 */
export function egressRefuses(endpoint: Endpoint, egress: EgressPolicy): boolean {
  const now = endpoint.clock.now();
  if (now - endpoint.egressCheckedAt <= EGRESS_RECHECK_MS) return false;
  if (egress.check(endpoint.address, endpoint.port)) return true;
  endpoint.egressCheckedAt = now;
  return false;
}

/** Socket and parser errors -> Cloudflare's answers, and whether another origin may be tried. */
export function classify(error: NodeJS.ErrnoException): UpstreamFailure {
  if (error instanceof EgressRefusedError) return { answer: TrafficErrors.egressRefused(), connectionFailed: true };
  switch (error.code) {
    case 'ECONNREFUSED':
      return { answer: TrafficErrors.originRefused(), connectionFailed: true };
    case 'ETIMEDOUT':
      return { answer: TrafficErrors.connectTimeout(), connectionFailed: true };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { answer: { status: 523, code: 523, message: 'The origin is unreachable.' }, connectionFailed: true };
    case 'ECONNRESET':
    case 'EPIPE':
      // Closed before any answer (often a kept-alive connection the origin had just closed).
      return { answer: TrafficErrors.badGateway('the origin closed the connection'), connectionFailed: true };
    case 'HPE_HEADER_OVERFLOW':
      return {
        answer: TrafficErrors.badGateway('the origin sent too large response headers'),
        connectionFailed: false,
      };
    default:
      if (error.code?.startsWith('HPE_')) {
        return { answer: TrafficErrors.badGateway('the origin sent an invalid response'), connectionFailed: false };
      }
      return { answer: TrafficErrors.badGateway('the origin connection failed'), connectionFailed: false };
  }
}
