import type { ClientRequest, IncomingMessage } from 'node:http';
import { TrafficErrors, type ErrorAnswer } from './error-answers.ts';
import { clientAddress, incomingView, overTls, upstreamRequestHeaders } from './forwarded-headers.ts';
import type { ProxyDeps } from './http-proxy.ts';
import { isErrorAnswer, whenRouted, type ProxyRoute, type ProxyTarget } from './route.ts';
import { sendUpstream, type UpstreamCallbacks } from './upstream.ts';

/**
 * Routes a request (plain or Upgrade): `proceed` gets its route; `refuse` answers a request that has none,
 * and a routing that failed (logged here) as an internal error.
 */
export function routeRequest(
  deps: ProxyDeps,
  req: IncomingMessage,
  proceed: (route: ProxyRoute) => void,
  refuse: (answer: ErrorAnswer) => void,
): void {
  whenRouted(
    () => deps.route(incomingView(req), overTls(req)),
    (route) => (isErrorAnswer(route) ? refuse(route) : proceed(route)),
    (error: unknown) => {
      deps.logger.error('load balancer routing failed', { host: req.headers.host, err: error });
      refuse(TrafficErrors.internal());
    },
  );
}

/**
 * One try of a request on `target`, as the plain and the Upgrade proxy make it: the endpoint counts it as
 * outstanding (until `occupied.release()`, which a failure calls before `onFailure`), and its head goes
 * upstream with the forwarded headers. A connection that failed marks the endpoint for passive health.
 */
export function attemptOn(
  deps: ProxyDeps,
  req: IncomingMessage,
  route: ProxyRoute,
  target: ProxyTarget,
  upgrade: boolean,
  callbacks: UpstreamCallbacks,
): { upstream: ClientRequest | undefined; occupied: ReturnType<ProxyTarget['endpoint']['occupy']> } {
  const { endpoint } = target;
  const occupied = endpoint.occupy();
  const headers = upstreamRequestHeaders(
    req,
    route.hostFor(target),
    clientAddress(req),
    overTls(req) ? 'https' : 'http',
    upgrade,
    route.forwardHeader,
  );
  const upstream = sendUpstream(
    target,
    { method: req.method ?? 'GET', path: req.url ?? '/', headers, upgrade },
    deps.settings,
    deps.egress,
    {
      ...callbacks,
      onFailure: (failure) => {
        occupied.release();
        if (failure.connectionFailed) endpoint.markFailed();
        callbacks.onFailure(failure);
      },
    },
  );
  return { upstream, occupied };
}
