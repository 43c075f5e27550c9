import type { z } from 'zod';
import { clip, CommonErrors, LedgeError } from '../shared/errors.ts';
import type { ApiContext } from './context.ts';

/** Default cap for control-plane request bodies (JSON). Streaming routes set their own. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;
/**
 * Deepest JSON nesting a body may have. JSON.parse copes with any depth, but JSON.stringify (storing,
 * the workerd config) recurses and overflows the stack near 10,000 levels: refuse far before that.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * The request body as a stream that fails with `tooLarge()` as soon as more than `limit` bytes have
 * arrived, whatever the framing: a declared Content-Length above the limit is refused before reading,
 * a chunked body when it passes the limit. Nothing past the limit is ever held in memory.
 *
 * It also fails when the client disconnects mid-body: the adapter's own body stream then never
 * settles (the pending read would keep the handler, and what it read, forever), but the request's
 * signal is aborted.
 */
export function limitedBody(
  c: ApiContext,
  limit: number,
  tooLarge: () => LedgeError = () => CommonErrors.payloadTooLarge(limit),
): ReadableStream<Uint8Array> | null {
  if (Number(c.req.header('content-length') ?? '0') > limit) throw tooLarge();
  const body = c.req.raw.body;
  if (!body) return null;
  const reader = body.getReader();
  // One abort listener per request, failing whichever read is pending (racing each read against a
  // shared promise would pile up one reaction per chunk on it).
  const signal = c.req.raw.signal;
  let failPending: ((error: unknown) => void) | undefined;
  signal.addEventListener('abort', () => failPending?.(CommonErrors.clientClosed()), { once: true });
  let total = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (signal.aborted) throw CommonErrors.clientClosed();
      const { done, value } = await new Promise<Awaited<ReturnType<typeof reader.read>>>((resolve, reject) => {
        failPending = reject;
        reader.read().then(resolve, reject);
      });
      failPending = undefined;
      if (done) {
        controller.close();
        return;
      }
      total += value.byteLength;
      if (total > limit) throw tooLarge();
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * The request with its body capped as `limitedBody` does, for parsers that take a whole Request
 * (`Request.formData()` buffers everything it reads: the cap bounds what it can buffer).
 */
export function limitedRequest(c: ApiContext, limit: number, tooLarge?: () => LedgeError): Request {
  const raw = c.req.raw;
  const body = limitedBody(c, limit, tooLarge);
  return new Request(raw.url, { method: raw.method, headers: raw.headers, body, duplex: 'half' } as RequestInit);
}

/**
 * Reads the whole request body, refusing it with 413 once it passes `limit` bytes: early from
 * Content-Length, and while reading for chunked bodies, so an oversized body is never buffered.
 */
export async function readBodyBytes(c: ApiContext, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const stream = limitedBody(c, limit);
  if (!stream) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Parses the body as JSON whatever its content type (wrangler labels JSON bodies text/plain) and
 * validates it. Failures become 400 with the subsystem's validation `code` and the field path.
 */
export async function readJson<S extends z.ZodType>(
  c: ApiContext,
  schema: S,
  options: { code: number; limit?: number; emptyAs?: unknown },
): Promise<z.infer<S>> {
  const bytes = await readBodyBytes(c, options.limit);
  const text = Buffer.from(bytes).toString('utf8').trim();
  const value = text === '' ? options.emptyAs : parseJsonText(text, options.code, 'request body');
  return parseWith(schema, value, options.code);
}

/** JSON.parse with the depth limit, failing with a 400 of the given code that names `what`. */
export function parseJsonText(text: string, code: number, what: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LedgeError(400, code, `Malformed JSON in ${what}: ${clip((error as Error).message)}`);
  }
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
    throw new LedgeError(400, code, `The JSON in ${what} is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return value;
}

/** Iterative (a recursive walk would overflow on exactly the input it guards against). */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Validates any input (query, JSON) against a schema, mapping issues to one clear v4 error. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, code: number): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new LedgeError(400, code, formatIssues(result.error.issues));
}

/** Paths and messages may carry the client's own keys and values: each is clipped. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) =>
      issue.path.length > 0 ? `${clip(issue.path.join('.'), 80)}: ${clip(issue.message)}` : clip(issue.message),
    )
    .join('; ');
}
