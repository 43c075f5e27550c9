import { clip, LedgeError } from '../shared/errors.ts';

/** Workers KV's v4 error codes (as Cloudflare's KV API answers them). */
export const KvCodes = {
  keyNotFound: 10009,
  malformedNamespaceId: 10011,
  invalidInput: 10012,
  namespaceNotFound: 10013,
  namespaceExists: 10014,
  tooManyNamespaces: 10018,
  missingTitle: 10019,
  payloadTooLarge: 10024,
  engineUnavailable: 10001,
} as const;

export const KvErrors = {
  keyNotFound: () => new LedgeError(404, KvCodes.keyNotFound, 'get: key not found'),
  namespaceNotFound: () => new LedgeError(404, KvCodes.namespaceNotFound, 'namespace not found'),
  malformedNamespaceId: () => new LedgeError(400, KvCodes.malformedNamespaceId, 'could not parse namespace ID'),
  namespaceExists: (title: string) =>
    new LedgeError(
      400,
      KvCodes.namespaceExists,
      `a namespace with this account ID and title already exists: ${clip(title)}`,
    ),
  tooManyNamespaces: (limit: number) =>
    new LedgeError(400, KvCodes.tooManyNamespaces, `too many namespaces in this account (the limit is ${limit})`),
  missingTitle: () => new LedgeError(400, KvCodes.missingTitle, 'missing title: a namespace needs a title'),
  invalid: (message: string) => new LedgeError(400, KvCodes.invalidInput, message),
  tooLarge: (message: string) => new LedgeError(413, KvCodes.payloadTooLarge, message),
  unavailable: () =>
    new LedgeError(503, KvCodes.engineUnavailable, 'service temporarily unavailable: the KV engine is restarting'),
};
