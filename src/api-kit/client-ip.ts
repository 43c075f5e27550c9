import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/**
 * The address of the peer that sent the request (the Node server passes its IncomingMessage as the env); undefined
 * for a request made in-process without one. A token's request_ip condition is checked against it, so a request
 * whose address is unknown meets no `in` list.
 */
export function clientIpOf(c: Context): string | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress;
}
