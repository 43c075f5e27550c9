/**
 * One error model for the whole platform. Anything that should reach an API client as a v4 error is a
 * `LedgeError`: an HTTP status, a stable v4 code (>= 1000) and a message, optionally an `error_chain`.
 * Subsystems declare their failures as small factories on top of it (see `src/<subsystem>/errors.ts`);
 * `src/api/errors.ts` maps them to the envelope in one place.
 */
export interface ErrorDetail {
  code: number;
  message: string;
  error_chain?: ErrorDetail[];
}

export class LedgeError extends Error {
  readonly status: number;
  readonly code: number;
  readonly chain: ErrorDetail[] | undefined;
  /** Extra headers for the HTTP response (e.g. `Retry-After`). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    code: number,
    message: string,
    options: { chain?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'LedgeError';
    this.status = status;
    this.code = code;
    this.chain = options.chain;
    this.headers = options.headers;
  }

  toDetail(): ErrorDetail {
    return this.chain
      ? { code: this.code, message: this.message, error_chain: this.chain }
      : { code: this.code, message: this.message };
  }
}

export function isLedgeError(error: unknown): error is LedgeError {
  return error instanceof LedgeError;
}

/** How much of a client's input an error message may quote (names, paths, parser messages). */
export const MAX_QUOTED_INPUT = 100;
/** Longest message an error carries: a backstop for messages that quote input without `clip`. */
export const MAX_ERROR_MESSAGE = 400;

/**
 * Shortens text from the client before an error message quotes it, so a 100 KB name is not echoed
 * back (and into the logs): the first `max` characters and how long the whole was.
 */
export function clip(text: string, max = MAX_QUOTED_INPUT): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}... (${text.length} characters)`;
}

/** Errors shared by every subsystem. Subsystem-specific ones live next to their code. */
export const CommonErrors = {
  routeNotFound: (path: string) =>
    new LedgeError(404, 7003, `Could not route to ${clip(path)}, perhaps your object identifier is invalid?`, {
      chain: [{ code: 7000, message: 'No route for that URI' }],
    }),
  methodNotAllowed: (method: string) => new LedgeError(405, 10405, `Method ${method} not allowed for this route`),
  invalidJson: (detail: string) => new LedgeError(400, 1001, `Invalid JSON in request body: ${detail}`),
  payloadTooLarge: (limit: number) =>
    new LedgeError(413, 1013, `Request body is larger than the limit of ${limit} bytes`),
  validation: (code: number, message: string) => new LedgeError(400, code, message),
  /** The client disconnected before its request was read: logged at debug level, answered to no one. */
  clientClosed: () => new LedgeError(499, 10499, 'The client closed the connection before the request was read.'),
  internal: (cause?: unknown) => new LedgeError(500, 10001, 'Internal error', { cause }),
} as const;
