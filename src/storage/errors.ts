import { clip, LedgeError } from '../shared/errors.ts';

/**
 * The object-storage failures with R2's v4 codes and statuses. The binding shows them to function code
 * as `Error("<op>: <message> (<code>)")`, so the messages follow R2's wording.
 */
export const R2Errors = {
  bucketExists: (name: string) =>
    new LedgeError(409, 10004, `The bucket you tried to create already exists, and you own it. (${clip(name)})`),
  invalidBucketName: (name: string) =>
    new LedgeError(
      400,
      10005,
      `The specified bucket name is not valid: "${clip(name)}". Names are 3-63 characters of lowercase letters, digits and hyphens, starting and ending with a letter or digit.`,
    ),
  noSuchBucket: (name: string) => new LedgeError(404, 10006, `The specified bucket does not exist. (${clip(name)})`),
  bucketNotEmpty: (name: string) =>
    new LedgeError(409, 10008, `The bucket you tried to delete is not empty. (${clip(name)})`),
  invalidArgument: (message: string) => new LedgeError(400, 10040, message),
  noSuchCorsConfiguration: () => new LedgeError(404, 10059, 'The CORS configuration does not exist.'),
  noSuchKey: () => new LedgeError(404, 10007, 'The specified key does not exist.'),
  entityTooLarge: () => new LedgeError(400, 100100, 'Your proposed upload exceeds the maximum allowed object size.'),
  entityTooSmall: () =>
    new LedgeError(400, 10011, 'Your proposed upload is smaller than the minimum allowed object size.'),
  metadataTooLarge: () => new LedgeError(400, 10012, 'Your metadata headers exceed the maximum allowed metadata size.'),
  incompleteBody: () =>
    new LedgeError(400, 10013, 'The request body terminated unexpectedly before Content-Length bytes arrived.'),
  invalidObjectName: () => new LedgeError(400, 10020, 'The specified object name is not valid.'),
  invalidMaxKeys: () => new LedgeError(400, 10022, 'MaxKeys params must be positive integer <= 1000.'),
  noSuchUpload: () => new LedgeError(404, 10024, 'The specified multipart upload does not exist.'),
  /**
   * R2 answers some requests that name no usable upload (complete or abort of an upload id unknown for
   * the key, a part listed twice) with its internal-error code; function code sees only the code and the
   * message, so the status stays a client-error one (and is not logged as a server fault).
   */
  internalError: (status: 400 | 404) =>
    new LedgeError(status, 10001, 'We encountered an internal error. Please try again.'),
  invalidPart: () => new LedgeError(400, 10025, 'One or more of the specified parts could not be found.'),
  preconditionFailed: () =>
    new LedgeError(412, 10031, 'At least one of the pre-conditions you specified did not hold.'),
  /** R2's three-line wording: which algorithm, what the client provided, what was received (hex). */
  badDigest: (algorithm: string, provided: string, received: string) =>
    new LedgeError(
      400,
      10037,
      [
        `The ${algorithm} checksum you specified did not match what we received.`,
        `You provided a ${algorithm} checksum with value: ${provided}`,
        `Actual ${algorithm} was: ${received}`,
      ].join('\n'),
    ),
  invalidRange: () => new LedgeError(416, 10039, 'The requested range is not satisfiable.'),
  /** Non-trailing parts of unequal size, or a last part larger than them. */
  badUpload: () => new LedgeError(400, 10048, 'There was a problem with the multipart upload.'),
  invalidDigest: (algorithm: string) =>
    new LedgeError(400, 10014, `The ${algorithm.toUpperCase()} digest you specified is not valid.`),
} as const;
