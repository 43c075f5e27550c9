/**
 * The data plane's own answers, shaped like Cloudflare's for non-browser clients: a status, and a short
 * text body starting "error code: N" with one sentence for the operator. Origin addresses are never
 * disclosed to clients.
 */
export interface ErrorAnswer {
  status: number;
  code: number;
  message: string;
}

export const TrafficErrors = {
  badHost: (): ErrorAnswer => ({
    status: 400,
    code: 400,
    message: 'The Host header is not a valid host name and port.',
  }),
  unknownHost: (host: string): ErrorAnswer => ({
    status: 404,
    code: 1001,
    message: `No load balancer serves the hostname "${host}".`,
  }),
  disabled: (host: string): ErrorAnswer => ({
    status: 503,
    code: 1000,
    message: `The load balancer "${host}" is disabled.`,
  }),
  steeringNotImplemented: (policy: string): ErrorAnswer => ({
    status: 501,
    code: 1002,
    message: `The steering policy "${policy}" is not implemented by Ledge's load balancer (use off, random, least_outstanding_requests or least_connections).`,
  }),
  noHealthyPool: (): ErrorAnswer => ({
    status: 503,
    code: 503,
    message: 'No healthy pool or origin is available for this load balancer.',
  }),
  originRefused: (): ErrorAnswer => ({ status: 521, code: 521, message: 'The origin refused the connection.' }),
  connectTimeout: (): ErrorAnswer => ({
    status: 522,
    code: 522,
    message: 'The connection to the origin timed out.',
  }),
  badGateway: (why: string): ErrorAnswer => ({ status: 502, code: 502, message: `Bad gateway: ${why}.` }),
  responseTimeout: (): ErrorAnswer => ({
    status: 524,
    code: 524,
    message: 'The origin accepted the connection but did not answer in time.',
  }),
  egressRefused: (): ErrorAnswer => ({
    status: 502,
    code: 502,
    message: "The origin's address is refused by the egress policy.",
  }),
  internal: (): ErrorAnswer => ({
    status: 500,
    code: 500,
    message: 'The load balancer failed while routing this request.',
  }),
} as const;

export function errorBody(answer: ErrorAnswer): string {
  return `error code: ${answer.code}\n${answer.message}\n`;
}

/** The HTTP/1.1 bytes of an error answer, for raw sockets (WebSocket upgrades). */
export function rawErrorResponse(answer: ErrorAnswer, reason: string): string {
  const body = errorBody(answer);
  return (
    `HTTP/1.1 ${answer.status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}
