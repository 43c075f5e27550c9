import { clip, LedgeError } from '../shared/errors.ts';

/** v4 codes of Cloudflare's zone API. */
export const ZONE_VALIDATION_CODE = 1001;

export const ZoneErrors = {
  validation: (detail: string) => new LedgeError(400, ZONE_VALIDATION_CODE, detail),
  /** Cloudflare: 1049 "<name> is not a registered domain" for names it cannot take. */
  invalidName: (name: string, why: string) =>
    new LedgeError(400, 1049, `"${clip(name)}" is not a valid zone name: ${why}`),
  /** Cloudflare: 1061 "<name> already exists." */
  duplicateName: (name: string) => new LedgeError(400, 1061, `${clip(name)} already exists.`),
  /** The same answer for a zone that does not exist and one of an account the caller is not a member of. */
  notFound: () => new LedgeError(404, 1003, 'Invalid or missing zone id.'),
} as const;
