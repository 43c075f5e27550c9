import { clip, LedgeError } from '../../shared/errors.ts';

/** Failures of the public-access routes (v4 codes in R2's 100xx range; R2 does not document its own here). */
export const PublicAccessErrors = {
  invalidDomain: (domain: string, problem: string) =>
    new LedgeError(400, 10040, `"${clip(domain)}" cannot be a custom domain: ${problem}`),
  zoneNotFound: (zoneId: string) => new LedgeError(404, 10040, `zone ${clip(zoneId)} is not a zone of this account`),
  notInZone: (domain: string, zone: string) =>
    new LedgeError(
      400,
      10040,
      `"${clip(domain)}" is not in the zone ${zone} (the most specific zone of the domain must be the one given)`,
    ),
  domainTaken: (domain: string) =>
    new LedgeError(409, 10073, `the custom domain ${clip(domain)} is already connected to a bucket`),
  domainInUse: (domain: string) =>
    new LedgeError(409, 10073, `${clip(domain)} already serves a load balancer on the traffic port`),
  domainNotFound: (domain: string) =>
    new LedgeError(404, 10072, `the custom domain ${clip(domain)} is not connected to this bucket`),
} as const;
