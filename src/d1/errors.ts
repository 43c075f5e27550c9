import { clip, LedgeError } from '../shared/errors.ts';

/** v4 codes of Cloudflare's D1 API (wrangler reads 7502 and 7406 by number). */
export const D1_VALIDATION_CODE = 7400;

export const D1Errors = {
  validation: (detail: string) => new LedgeError(400, D1_VALIDATION_CODE, detail),
  /** The same answer for a database that does not exist and one of another account. */
  notFound: (idOrName: string) => new LedgeError(404, 7404, `The database ${clip(idOrName)} could not be found.`),
  duplicateName: (name: string) => new LedgeError(400, 7502, `A database with name "${clip(name)}" already exists.`),
  tooMany: (max: number) =>
    new LedgeError(400, 7406, `You have reached the maximum number of D1 databases (${max}) for this account.`),
  /** A statement SQLite refused (the engine's message, as D1 words it: `<what>: SQLITE_<CODE>`). */
  query: (message: string) => new LedgeError(400, 7500, message),
  /** The account's engine could not be reached (starting, or restarted after a crash). */
  unavailable: (detail: string) => new LedgeError(503, 7500, `D1 is unavailable: ${detail}`),
  importNotFound: () => new LedgeError(404, 7404, 'No upload found for this import: start again with action "init".'),
  exportNotFound: () => new LedgeError(404, 7404, 'This export link is unknown or has expired: export again.'),
} as const;
