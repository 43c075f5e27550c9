/**
 * The HTTP proxy engine: relays requests and upgrades to origins over pooled connections, with the data
 * plane's deadlines, bounds and Cloudflare's error answers. It knows nothing of load balancers: the product
 * that uses it (load-balancing/traffic/) accepts the connections and routes each request (a Router
 * returning a ProxyRoute), and the engine asks the route again when a target cannot be reached.
 */
export { ProxyServer, type ProxyServerOptions } from './server.ts';
export type { HostHandler } from './host-handler.ts';
export { proxyRequest, type ProxyDeps } from './http-proxy.ts';
export { proxyUpgrade } from './websocket-proxy.ts';
export { ClientConnection, type ClientHost } from './raw/client-connection.ts';
export {
  Endpoint,
  EndpointRegistry,
  isFailing,
  PASSIVE_FAILURE_MS,
  passiveFailures,
  type Origin,
} from './endpoints.ts';
export { TrafficErrors, type ErrorAnswer } from './error-answers.ts';
export { isValidHostHeader } from './forwarded-headers.ts';
export type { ProxyRoute, ProxyTarget, RequestView, RouteResult, Router } from './route.ts';
export type { ProxySettings } from './settings.ts';
export type { ClientHello } from './tls/client-hello.ts';
export { ciphersFor, type TlsChoice, type TlsCredentials, type TlsTermination } from './tls/terminate.ts';
