import { clip, LedgeError } from '../shared/errors.ts';

/** v4 validation code of the Workers API (the one `src/workers/` answers bad bodies with). */
export const ROUTE_VALIDATION_CODE = 10021;

/**
 * Workers routes and Custom Domains errors. 10019 (no such Worker), 10020 (duplicate pattern) and 10022 (the
 * pattern is not in the zone) are Cloudflare's codes; the Custom Domain codes (1001xx) and the route-not-found
 * code are Ledge's choice in Cloudflare's Workers range, since Cloudflare documents none for them.
 */
export const RouteErrors = {
  validation: (detail: string) => new LedgeError(400, ROUTE_VALIDATION_CODE, detail),
  invalidPattern: (pattern: string, why: string) =>
    new LedgeError(400, 10022, `Invalid route pattern "${clip(pattern)}": ${why}.`),
  outsideZone: (pattern: string) =>
    new LedgeError(400, 10022, `Route pattern must include zone name: ${clip(pattern)}`),
  duplicatePattern: (pattern: string) =>
    new LedgeError(409, 10020, `A route with the same pattern already exists: ${clip(pattern)}`),
  scriptNotFound: () =>
    new LedgeError(
      400,
      10019,
      'Cannot configure a route for a Worker which does not exist. Please ensure this Worker exists and try again.',
    ),
  /** The script-scoped calls answer as the rest of /workers/scripts/{name} does for a missing script. */
  scriptMissing: () => new LedgeError(404, 10007, 'This Worker does not exist on your account.'),
  routeNotFound: () => new LedgeError(404, 10005, 'Route not found.'),
  /** wrangler's route lookup by zone name finds nothing: the zone is not the account's. */
  zoneNotFound: (name: string) =>
    new LedgeError(404, 1003, `Could not find zone for ${clip(name)}: no zone of this account contains it.`),
  invalidHostname: (hostname: string, why: string) =>
    new LedgeError(400, 100117, `"${clip(hostname)}" is not a valid hostname for a Custom Domain: ${why}.`),
  hostnameOutsideZone: (hostname: string, zone: string) =>
    new LedgeError(400, 100117, `The hostname ${clip(hostname)} is not in the zone ${clip(zone)}.`),
  hostnameTaken: (hostname: string, what: string) =>
    new LedgeError(409, 100118, `${clip(hostname)} is already used by ${what}.`),
  domainNotFound: () => new LedgeError(404, 100114, 'Domain not found.'),
} as const;
