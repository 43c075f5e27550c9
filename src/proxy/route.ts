import type { Endpoint } from './endpoints.ts';
import type { ErrorAnswer } from './error-answers.ts';

/** What routing reads of a request, from node:http's IncomingMessage or the raw data plane's parsed head. */
export interface RequestView {
  host: string | undefined;
  /** The hostname of `host` as every listener compares it (shared/hostname.ts's hostnameOf), read once. */
  hostname: string;
  /** The request target as sent (origin form `/path?query`, or absolute form). */
  target: string;
  clientAddress: string;
  /** A header's value by lowercase name (repeated ones joined), for session affinity. */
  header(lowercaseName: string): string | undefined;
}

/** One origin a request may go to: the engine needs its connections; the product knows the rest. */
export interface ProxyTarget {
  readonly endpoint: Endpoint;
}

/**
 * Where a request goes, as the product that routes it (load balancing) decided: the engine sends it to
 * `target`, and asks the route again for another target when that one could not be reached.
 */
export interface ProxyRoute<T extends ProxyTarget = ProxyTarget> {
  readonly target: T;
  /** Set-Cookie for the answer of the first target (a new cookie session). */
  readonly setCookie?: string | undefined;
  /** One header the origin gets on top of the client's (replacing any the client sent under that name). */
  readonly forwardHeader?: { readonly name: string; readonly value: string } | undefined;
  /** The Host header the origin gets instead of the client's; undefined: the client's. */
  hostFor(target: T): string | undefined;
  /** Another target once `failed` could not be reached; undefined: none is left. */
  retryTarget(failed: T): T | undefined;
  /** Set-Cookie for an answer of a target taken on retry. */
  retryCookie(target: T): string | undefined;
  /** `target` answered: what session affinity needs is recorded. */
  answered(target: T): void;
}

export type RouteResult = ProxyRoute | ErrorAnswer;

/**
 * Routes one request (`https`: the client came over TLS, for cookie attributes). Answers synchronously when
 * it can (the hot path: no Promise per request), and with a Promise when it has to read something.
 */
export type Router = (request: RequestView, https: boolean) => RouteResult | Promise<RouteResult>;

export function isErrorAnswer(value: RouteResult): value is ErrorAnswer {
  return (value as ErrorAnswer).status !== undefined;
}

/**
 * Calls `then` with the route, at once when routing answered synchronously; `fail` gets a routing error
 * (a thrown one or a rejected lookup) either way.
 */
export function whenRouted(
  route: () => RouteResult | Promise<RouteResult>,
  then: (result: RouteResult) => void,
  fail: (error: unknown) => void,
): void {
  let result: RouteResult | Promise<RouteResult>;
  try {
    result = route();
  } catch (error) {
    return fail(error);
  }
  if (result instanceof Promise) result.then(then, fail);
  else then(result);
}
