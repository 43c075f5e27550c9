import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostHandler } from '../proxy/index.ts';
import { hostnameOf } from '../shared/hostname.ts';
import type { CertificateDirectory } from './certificate-directory.ts';

const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

/**
 * The plain traffic port's extra duties, in front of its host handler (public buckets): the answers to
 * pending HTTP-01 challenges, and the zone setting `always_use_https` (a 301 to the same URL over HTTPS,
 * except for challenge paths, as Cloudflare does). Only hosts with a pending challenge or that setting on
 * are claimed, so other requests stay on the raw data plane. `inner` is what the port serves by Host otherwise
 * (Workers routes, then public buckets).
 */
export function plainHostHandler(
  directory: CertificateDirectory,
  inner: HostHandler | undefined,
  httpsPort: () => number | undefined,
): HostHandler {
  return {
    claims: (hostname, target) =>
      directory.hasHttpChallenges(hostname) ||
      (directory.policyFor(hostname).alwaysUseHttps && directory.certificateFor(hostname) !== undefined) ||
      (inner?.claims(hostname, target) ?? false),
    handle: (req, res, next) => {
      const hostname = hostnameOf(req.headers.host);
      const path = req.url ?? '/';
      if (path.startsWith(CHALLENGE_PREFIX)) {
        const answer = directory.httpChallenge(hostname, path.slice(CHALLENGE_PREFIX.length));
        if (answer !== undefined) return send(res, 200, answer);
      } else if (directory.policyFor(hostname).alwaysUseHttps && directory.certificateFor(hostname)) {
        return redirect(req, res, hostname, httpsPort());
      }
      if (inner?.claims(hostname, path)) inner.handle(req, res, next);
      else next();
    },
  };
}

function redirect(req: IncomingMessage, res: ServerResponse, hostname: string, port: number | undefined): void {
  const authority = port === undefined || port === 443 ? hostname : `${hostname}:${port}`;
  res.writeHead(301, { location: `https://${authority}${req.url ?? '/'}`, 'content-length': 0 });
  res.end();
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
