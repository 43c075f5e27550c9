import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { attemptOn, routeRequest } from './attempt.ts';
import { rawErrorResponse, type ErrorAnswer } from './error-answers.ts';
import type { ProxyDeps } from './http-proxy.ts';
import type { ProxyRoute as Route, ProxyTarget as Target } from './route.ts';

/**
 * An Upgrade request (WebSocket): routed like any request, then the two sockets are piped to each other
 * once the origin switches protocols. An origin that answers without upgrading has its answer relayed.
 * A connection failure is retried once on another origin (the handshake is a GET without a body).
 */
export function proxyUpgrade(deps: ProxyDeps, req: IncomingMessage, client: Duplex, head: Buffer): void {
  client.on('error', () => client.destroy());
  routeRequest(
    deps,
    req,
    (route) => attemptUpgrade(deps, req, client, head, route, route.target, true),
    (error) => answer(client, error),
  );
}

function attemptUpgrade(
  deps: ProxyDeps,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  route: Route,
  target: Target,
  mayRetry: boolean,
): void {
  const { upstream, occupied } = attemptOn(deps, req, route, target, true, {
    onUpgrade: (response, socket, upstreamHead) => {
      // Answered: no longer an outstanding request, but a connection in use until either side closes.
      socket.once('close', occupied.keepConnection());
      if (client.destroyed) return void socket.destroy();
      client.write(responseHead(response, route.setCookie));
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (head.length > 0) socket.write(head);
      socket.on('error', () => client.destroy());
      client.on('error', () => socket.destroy());
      socket.on('close', () => client.destroy());
      client.on('close', () => socket.destroy());
      socket.pipe(client);
      client.pipe(socket);
    },
    onResponse: (response) => {
      // Not upgraded: relay the origin's answer and close.
      client.write(responseHead(response, undefined, true));
      response.pipe(client);
      response.once('end', occupied.release);
      response.once('error', () => client.destroy());
    },
    onFailure: (failure) => {
      if (mayRetry && failure.connectionFailed && !client.destroyed) {
        const next = route.retryTarget(target);
        if (next) return attemptUpgrade(deps, req, client, head, route, next, false);
      }
      answer(client, failure.answer);
    },
  });
  if (!upstream) return;
  client.once('close', () => {
    occupied.release();
    if (!upstream.destroyed && !upstream.socket?.readable) upstream.destroy();
  });
  upstream.end();
}

function responseHead(response: IncomingMessage, setCookie: string | undefined, close = false): string {
  let head = `HTTP/1.1 ${response.statusCode} ${response.statusMessage || STATUS_CODES[response.statusCode ?? 0] || ''}\r\n`;
  const raw = response.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (close && /^(connection|keep-alive|transfer-encoding)$/i.test(raw[i]!)) continue;
    head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  if (setCookie) head += `set-cookie: ${setCookie}\r\n`;
  if (close) head += 'connection: close\r\n';
  return `${head}\r\n`;
}

function answer(client: Duplex, error: ErrorAnswer): void {
  if (client.destroyed) return;
  client.end(rawErrorResponse(error, STATUS_CODES[error.status] ?? 'Error'));
}
