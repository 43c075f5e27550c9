import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ApiContext } from './context.ts';
import { successBody, type Message, type ResultInfo } from './envelope.ts';

/** Answers with the v4 success envelope (always `Content-Type: application/json`). */
export function ok<T>(
  c: ApiContext,
  result: T,
  options: { status?: ContentfulStatusCode; resultInfo?: ResultInfo; messages?: Message[] } = {},
): Response {
  return c.json(successBody(result, options.resultInfo, options.messages), options.status ?? 200);
}
