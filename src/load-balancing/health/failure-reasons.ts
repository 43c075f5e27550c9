/** The failure_reason vocabulary of Cloudflare's pool health API. */
export const FailureReason = {
  none: 'No failures',
  tcpConnectionFailed: 'TCP connection failed',
  httpTimeout: 'HTTP timeout occurred',
  responseCodeMismatch: 'Response code mismatch error',
  responseBodyMismatch: 'Response body mismatch error',
  tlsUntrusted: 'TLS untrusted certificate error',
  tlsNameMismatch: 'TLS name mismatch error',
  dnsUnknownHost: 'DNS Unknown Host',
  connectionReset: 'Connection Reset by Peer',
  networkUnreachable: 'Network Unreachable',
  invalidResponse: 'HTTP Invalid Response',
  other: 'Other Failure',
  /** Ledge's own: the operator's egress policy refuses the address (nothing was sent). */
  egressRefused: 'Refused by egress policy',
} as const;

export type FailureReasonText = (typeof FailureReason)[keyof typeof FailureReason];

const UNTRUSTED_CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
]);

/** Maps a socket/TLS/parser error of node:net, node:tls or node:http to the vocabulary. */
export function reasonForError(error: unknown): FailureReasonText {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return FailureReason.other;
  if (code === 'ERR_EGRESS_REFUSED') return FailureReason.egressRefused;
  if (code === 'ECONNREFUSED') return FailureReason.tcpConnectionFailed;
  if (code === 'ECONNRESET' || code === 'EPIPE') return FailureReason.connectionReset;
  if (code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'EADDRNOTAVAIL')
    return FailureReason.networkUnreachable;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return FailureReason.dnsUnknownHost;
  if (code === 'ETIMEDOUT') return FailureReason.httpTimeout;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return FailureReason.tlsNameMismatch;
  if (UNTRUSTED_CERT_CODES.has(code)) return FailureReason.tlsUntrusted;
  if (code.startsWith('HPE_')) return FailureReason.invalidResponse;
  return FailureReason.other;
}
