import type { Clock } from '../shared/clock.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EgressPolicy } from '../egress/index.ts';
import type { Logger } from '../shared/logger.ts';
import { attemptOn, routeRequest } from './attempt.ts';
import { errorBody, type ErrorAnswer } from './error-answers.ts';
import { downstreamResponseHeaders } from './forwarded-headers.ts';
import type { ProxyRoute as Route, ProxyTarget as Target, Router } from './route.ts';
import type { ProxySettings } from './settings.ts';
import type { UpstreamFailure } from './upstream.ts';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

export interface ProxyDeps {
  /** Where each request goes (the product's routing). */
  route: Router;
  settings: ProxySettings;
  egress: EgressPolicy;
  logger: Logger;
  /** The listener's time: connection stamps for its timeouts. */
  clock: Clock;
}

/** A request without a body can be sent twice; one with a body is streamed once, never buffered. */
export function hasNoBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/** The listener's request handler: route, proxy with one retry for a failed connection, answer errors. */
export function proxyRequest(deps: ProxyDeps, req: IncomingMessage, res: ServerResponse): void {
  routeRequest(
    deps,
    req,
    (route) => {
      const retry = IDEMPOTENT.has(req.method ?? '') && hasNoBody(req);
      attempt(deps, req, res, route, route.target, retry);
    },
    (answer) => answerError(res, answer),
  );
}

function attempt(
  deps: ProxyDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  target: Target,
  mayRetry: boolean,
): void {
  const { upstream, occupied } = attemptOn(deps, req, route, target, false, {
    onResponse: (response) => {
      target.endpoint.failedAt = 0;
      const out = downstreamResponseHeaders(response.headers);
      const cookie = target === route.target ? route.setCookie : route.retryCookie(target);
      if (cookie) out['set-cookie'] = appendCookie(out['set-cookie'], cookie);
      route.answered(target);
      res.writeHead(response.statusCode ?? 502, response.statusMessage, out);
      response.pipe(res);
      response.once('end', occupied.release);
      // The origin broke off mid-body: the client must see a broken response, not a short one.
      response.once('error', () => res.destroy());
      response.once('aborted', () => res.destroy());
    },
    onFailure: (failure) => retryOrAnswer(deps, req, res, route, target, mayRetry, failure),
  });
  if (!upstream) return;
  // The client went away: stop the origin's work too.
  res.once('close', () => {
    occupied.release();
    if (!res.writableFinished) upstream.destroy();
  });
  if (hasNoBody(req)) upstream.end();
  else req.pipe(upstream);
}

function retryOrAnswer(
  deps: ProxyDeps,
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  failed: Target,
  mayRetry: boolean,
  failure: UpstreamFailure,
): void {
  if (res.destroyed || res.headersSent) return void res.destroy();
  if (mayRetry && failure.connectionFailed) {
    const next = route.retryTarget(failed);
    if (next) return attempt(deps, req, res, route, next, false);
  }
  answerError(res, failure.answer);
}

function appendCookie(existing: string | string[] | number | undefined, cookie: string): string[] {
  if (existing === undefined) return [cookie];
  return [...(Array.isArray(existing) ? existing : [String(existing)]), cookie];
}

export function answerError(res: ServerResponse, answer: ErrorAnswer): void {
  if (res.headersSent || res.destroyed) return void res.destroy();
  const body = errorBody(answer);
  res.writeHead(answer.status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}
