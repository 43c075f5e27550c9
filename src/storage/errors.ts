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
  invalidPart: () =>
    new LedgeError(
      400,
      10025,
      "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
    ),
  preconditionFailed: () =>
    new LedgeError(412, 10031, 'At least one of the pre-conditions you specified did not hold.'),
  badDigest: (algorithm: string) =>
    new LedgeError(400, 10037, `The ${algorithm.toUpperCase()} checksum you specified did not match what we received.`),
  invalidRange: () => new LedgeError(416, 10039, 'The requested range is not satisfiable.'),
  badUpload: (detail: string) => new LedgeError(400, 10048, `There was a problem with the multipart upload: ${detail}`),
  invalidDigest: (algorithm: string) =>
    new LedgeError(400, 10014, `The ${algorithm.toUpperCase()} digest you specified is not valid.`),
} as const;
