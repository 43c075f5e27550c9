import { clip, LedgeError } from '../shared/errors.ts';

/**
 * A failure as the S3 API reports it: an HTTP status and S3's string code (`NoSuchKey`,
 * `SignatureDoesNotMatch`, ...). It is a LedgeError so the platform's one error model holds; the v4 code
 * is never shown on this door.
 */
export class S3Error extends LedgeError {
  readonly s3Code: string;
  /** Elements S3 adds to this error's XML after `<Message>` (an expired URL's `<Expires>`, ...). */
  readonly details: Record<string, string>;

  constructor(
    status: number,
    s3Code: string,
    message: string,
    headers?: Record<string, string>,
    details: Record<string, string> = {},
  ) {
    super(status, 10000, message, headers ? { headers } : {});
    this.name = 'S3Error';
    this.s3Code = s3Code;
    this.details = details;
  }
}

/** The storage engine's failures (R2's v4 codes) under the S3 codes R2 answers them with. */
const BY_V4_CODE: Record<number, string> = {
  10001: 'InternalError',
  10004: 'BucketAlreadyExists',
  10005: 'InvalidBucketName',
  10006: 'NoSuchBucket',
  10007: 'NoSuchKey',
  10008: 'BucketNotEmpty',
  10011: 'EntityTooSmall',
  10012: 'MetadataTooLarge',
  10013: 'IncompleteBody',
  10014: 'InvalidDigest',
  10020: 'InvalidObjectName',
  10022: 'InvalidArgument',
  10024: 'NoSuchUpload',
  10025: 'InvalidPart',
  10031: 'PreconditionFailed',
  10037: 'BadDigest',
  10039: 'InvalidRange',
  10040: 'InvalidArgument',
  10048: 'BadUpload',
  10059: 'NoSuchCORSConfiguration',
  100100: 'EntityTooLarge',
};

const isoSeconds = (time: number) => new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The S3 status and code of any error (an unexpected one is a 500 InternalError). */
export function s3CodeOf(error: unknown): {
  status: number;
  code: string;
  message: string;
  details?: Record<string, string>;
} {
  if (error instanceof S3Error) {
    return { status: error.status, code: error.s3Code, message: error.message, details: error.details };
  }
  if (error instanceof LedgeError) {
    const code =
      BY_V4_CODE[error.code] ??
      (error.status === 403 ? 'AccessDenied' : error.status >= 500 ? 'InternalError' : 'InvalidRequest');
    return { status: error.status, code, message: error.message };
  }
  return { status: 500, code: 'InternalError', message: 'We encountered an internal error. Please try again.' };
}

export const S3Errors = {
  accessDenied: (message = 'Access Denied') => new S3Error(403, 'AccessDenied', message),
  signatureDoesNotMatch: () =>
    new S3Error(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your secret access key and signing method.',
    ),
  invalidAccessKeyId: () =>
    new S3Error(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'),
  requestTimeTooSkewed: () =>
    new S3Error(
      403,
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    ),
  /** An expired presigned URL, with the elements S3 gives it (times without milliseconds, as S3's). */
  expired: (expiresSeconds: string, expiresAt: number, now: number) =>
    new S3Error(403, 'AccessDenied', 'Request has expired', undefined, {
      'X-Amz-Expires': expiresSeconds,
      Expires: isoSeconds(expiresAt),
      ServerTime: isoSeconds(now),
    }),
  authorizationHeaderMalformed: (message: string) => new S3Error(400, 'AuthorizationHeaderMalformed', message),
  authorizationQueryParametersError: (message: string) =>
    new S3Error(400, 'AuthorizationQueryParametersError', message),
  invalidRequest: (message: string) => new S3Error(400, 'InvalidRequest', message),
  invalidArgument: (message: string) => new S3Error(400, 'InvalidArgument', message),
  malformedXml: () =>
    new S3Error(
      400,
      'MalformedXML',
      'The XML you provided was not well-formed or did not validate against our published schema.',
    ),
  notImplemented: (what: string) =>
    new S3Error(501, 'NotImplemented', `${clip(what)} is not implemented: R2's S3 API does not offer it.`),
  methodNotAllowed: () =>
    new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.'),
  contentSha256Mismatch: () =>
    new S3Error(
      400,
      'XAmzContentSHA256Mismatch',
      "The provided 'x-amz-content-sha256' header does not match what was computed.",
    ),
  /** S3's words: the algorithm in capitals (`The SHA256 you specified ...`). */
  badDigest: (algorithm: string) =>
    new S3Error(
      400,
      'BadDigest',
      `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`,
    ),
  contentMd5Mismatch: () =>
    new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.'),
  invalidDigest: () => new S3Error(400, 'InvalidDigest', 'The Content-MD5 you specified is not valid.'),
  incompleteBody: () =>
    new S3Error(
      400,
      'IncompleteBody',
      'You did not provide the number of bytes specified by the Content-Length HTTP header.',
    ),
  invalidChunk: (message: string) => new S3Error(400, 'InvalidChunkEncoding', message),
  missingContentLength: () =>
    new S3Error(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.'),
  invalidStorageClass: () => new S3Error(400, 'InvalidStorageClass', 'The storage class you specified is not valid.'),
  noSuchKey: () => new S3Error(404, 'NoSuchKey', 'The specified key does not exist.'),
  noSuchBucket: () => new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist.'),
  noSuchLifecycle: () =>
    new S3Error(404, 'NoSuchLifecycleConfiguration', 'The lifecycle configuration does not exist.'),
  invalidRange: (size: number) =>
    new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable', { 'content-range': `bytes */${size}` }),
  invalidPartNumber: () => new S3Error(416, 'InvalidPartNumber', 'The requested partnumber is not satisfiable'),
  preconditionFailed: () =>
    new S3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'),
  invalidLocation: () =>
    new S3Error(400, 'InvalidLocationConstraint', 'The specified location-constraint is not valid'),
  invalidBucketName: () => new S3Error(400, 'InvalidBucketName', 'The specified bucket is not valid.'),
  keyTooLong: () => new S3Error(400, 'KeyTooLongError', 'Your key is too long'),
} as const;
