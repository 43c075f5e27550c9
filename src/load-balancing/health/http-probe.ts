import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { EgressPolicy } from '../../egress/index.ts';
import { FailureReason, reasonForError } from './failure-reasons.ts';
import type { ProbeResult, ProbeTarget } from './probe-types.ts';

/** Only the first 10 KB of a body are searched for `expected_body`, as Cloudflare does. */
const BODY_LIMIT = 10 * 1024;
const MAX_REDIRECTS = 5;
const USER_AGENT = 'Mozilla/5.0 (compatible; Ledge-Health-Checker/0.1; pool-id: ';

/**
 * One HTTP(S) health check attempt. Each attempt opens its own connection (no keep-alive agent): a
 * health check must see a dead listener or a broken TLS setup, which a pooled socket would hide.
 * The deadline covers connect, TLS, headers and the body read. The egress policy is applied to every
 * connection (redirects included): IP literals before connecting, names in the lookup.
 */
export function httpAttempt(target: ProbeTarget, egress: EgressPolicy): Promise<ProbeResult> {
  const started = performance.now();
  const scheme = target.type === 'https' ? 'https:' : 'http:';
  const host = isIP(target.address) === 6 ? `[${target.address}]` : target.address;
  const first = new URL(`${scheme}//${host}:${target.port}${target.path}`);
  return new Promise<ProbeResult>((resolve) => {
    let settled = false;
    let current: { destroy(): void } | undefined;
    const finish = (result: Omit<ProbeResult, 'rttMs'>, rttMs: number | null = performance.now() - started) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      current?.destroy();
      resolve({ ...result, rttMs });
    };
    const deadline = setTimeout(
      () => finish({ healthy: false, failureReason: FailureReason.httpTimeout, responseCode: null }, null),
      target.timeoutMs,
    );
    const send = (url: URL, redirectsLeft: number) => {
      const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
      if (egress.check(url.hostname, port)) {
        finish({ healthy: false, failureReason: FailureReason.egressRefused, responseCode: null }, null);
        return;
      }
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: target.method,
        headers: requestHeaders(target),
        lookup: egress.lookupFor(port),
        agent: false,
        rejectUnauthorized: !target.allowInsecure,
        servername: tlsServerName(target),
      });
      current = req;
      req.on('error', (error) => {
        const failureReason = reasonForError(error);
        // Refused in the lookup: no connection was made, so there is no round trip to report.
        const rtt = failureReason === FailureReason.egressRefused ? null : undefined;
        finish({ healthy: false, failureReason, responseCode: null }, rtt);
      });
      req.on('response', (res) => {
        const rtt = performance.now() - started;
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (target.followRedirects && status >= 300 && status < 400 && location && redirectsLeft > 0) {
          res.resume();
          req.destroy();
          // The origin chooses where a redirect goes: a malformed or non-HTTP location is a failed check,
          // never an exception thrown inside this event handler (which would take the server down).
          const next = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
          if (!next || (next.protocol !== 'http:' && next.protocol !== 'https:')) {
            finish({ healthy: false, failureReason: FailureReason.invalidResponse, responseCode: status }, rtt);
            return;
          }
          send(next, redirectsLeft - 1);
          return;
        }
        if (!codeMatches(status, target.expectedCodes)) {
          finish({ healthy: false, failureReason: FailureReason.responseCodeMismatch, responseCode: status }, rtt);
          return;
        }
        if (target.expectedBody === '' || target.method === 'HEAD') {
          finish({ healthy: true, failureReason: FailureReason.none, responseCode: status }, rtt);
          return;
        }
        readHead(res, (body) => {
          const found = body.toLowerCase().includes(target.expectedBody.toLowerCase());
          finish(
            found
              ? { healthy: true, failureReason: FailureReason.none, responseCode: status }
              : { healthy: false, failureReason: FailureReason.responseBodyMismatch, responseCode: status },
            rtt,
          );
        });
      });
      req.end();
    };
    send(first, MAX_REDIRECTS);
  });
}

/** Collects up to BODY_LIMIT bytes (or the whole body if shorter), then stops reading. */
function readHead(res: IncomingMessage, done: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let called = false;
  const complete = () => {
    if (called) return;
    called = true;
    done(Buffer.concat(chunks).subarray(0, BODY_LIMIT).toString('utf8'));
  };
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= BODY_LIMIT) {
      complete();
      res.destroy();
    }
  });
  res.on('end', complete);
  res.on('error', complete);
}

/** "200", "2xx" or a comma-separated list of those. */
export function codeMatches(status: number, expected: string): boolean {
  const text = String(status);
  return expected.split(',').some((raw) => {
    const pattern = raw.trim();
    return pattern.endsWith('xx') ? text[0] === pattern[0] : text === pattern;
  });
}

function requestHeaders(target: ProbeTarget): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { 'user-agent': `${USER_AGENT}${target.poolId})`, connection: 'close' };
  for (const [name, values] of Object.entries(target.headers))
    headers[name.toLowerCase()] = values.length === 1 ? values[0] : values;
  return headers;
}

/** SNI follows the Host header when it names a host; an IP literal sends no SNI (RFC 6066). */
function tlsServerName(target: ProbeTarget): string | undefined {
  const host = target.headers['host']?.[0] ?? target.headers['Host']?.[0] ?? target.address;
  const name = host.replace(/:\d+$/, '');
  return isIP(name) === 0 ? name : undefined;
}
