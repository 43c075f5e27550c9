import type { ServerResponse } from 'node:http';

/**
 * The small HTML pages a public bucket answers with when it has no object to send, in the style of R2's
 * public-bucket errors. They never quote the request (no tenant or client text in the page).
 */
const PAGES = {
  400: ['400 Bad Request', 'The request path is not a valid object key.'],
  401: [
    '401 Unauthorized',
    'This bucket is read-only over its public URL: use the S3 API or the Cloudflare API to write.',
  ],
  403: ['403 Forbidden', 'This CORS request is not allowed by the bucket.'],
  404: ['404 Not Found', 'The object you requested does not exist in this bucket.'],
  412: ['412 Precondition Failed', 'The object does not match the conditions of the request.'],
  416: ['416 Range Not Satisfiable', 'The requested range is not within the object.'],
  500: ['500 Internal Server Error', 'The object could not be read. Try again.'],
} as const;

export type PageStatus = keyof typeof PAGES;

export function sendPage(
  res: ServerResponse,
  status: PageStatus,
  method: string,
  headers: Record<string, string> = {},
): void {
  const [title, text] = PAGES[status];
  const body = `<!DOCTYPE html>\n<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p><hr><p>ledge r2</p></body></html>\n`;
  res.writeHead(status, {
    ...headers,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
  });
  res.end(method === 'HEAD' ? undefined : body);
}
