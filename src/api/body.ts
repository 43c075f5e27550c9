import type { z } from 'zod';
import { CommonErrors, LedgeError } from '../shared/errors.ts';
import type { ApiContext } from './context.ts';

/** Default cap for control-plane request bodies (JSON). Streaming routes set their own. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * Reads the whole request body, refusing it with 413 once it passes `limit` bytes: early from
 * Content-Length, and while reading for chunked bodies, so an oversized body is never buffered.
 */
export async function readBodyBytes(c: ApiContext, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > limit) throw CommonErrors.payloadTooLarge(limit);
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.byteLength;
    if (total > limit) throw CommonErrors.payloadTooLarge(limit);
    chunks.push(chunk);
  }
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
  let value: unknown = options.emptyAs;
  if (text !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new LedgeError(400, options.code, `Malformed JSON in request body: ${(error as Error).message}`);
    }
  }
  return parseWith(schema, value, options.code);
}

/** Validates any input (query, JSON) against a schema, mapping issues to one clear v4 error. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, code: number): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new LedgeError(400, code, formatIssues(result.error.issues));
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}
