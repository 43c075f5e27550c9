/**
 * The dashboard's only way to the server: /client/v4 (and /dashboard/) with the session cookie, which the
 * browser sends by itself (HttpOnly: script never sees it). Writes carry the session's CSRF token, kept in
 * memory only (never localStorage).
 */
export interface Envelope<T> {
  success: boolean;
  result: T;
  errors: { code: number; message: string }[];
  result_info?: {
    page?: number;
    per_page?: number;
    total_count?: number;
    total_pages?: number;
    cursor?: string;
    is_truncated?: boolean;
    delimited?: string[];
  } & Record<string, unknown>;
}

export class ApiFailure extends Error {
  readonly status: number;
  readonly code: number;
  constructor(status: number, code: number, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

export function setCsrf(token: string): void {
  csrfToken = token;
}
export function csrf(): string {
  return csrfToken;
}
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export const V4 = '/client/v4';

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  query?: Record<string, string | number | undefined>,
): Promise<Envelope<T>> {
  const url = new URL(path.startsWith('/dashboard/') ? path : V4 + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  let envelope: Envelope<T>;
  try {
    envelope = (await response.json()) as Envelope<T>;
  } catch {
    throw new ApiFailure(response.status, 0, `The server answered HTTP ${response.status} without JSON`);
  }
  if (!envelope.success) {
    const first = envelope.errors?.[0] ?? { code: 0, message: `HTTP ${response.status}` };
    // The session ended (expired, signed out elsewhere, token revoked): back to the sign-in page.
    if (response.status === 401 || first.code === 9106) onSignedOut();
    throw new ApiFailure(response.status, first.code, first.message);
  }
  return envelope;
}

export async function get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T> {
  return (await call<T>('GET', path, undefined, query)).result;
}
export async function post<T>(path: string, body?: unknown): Promise<T> {
  return (await call<T>('POST', path, body ?? {})).result;
}
export async function put<T>(path: string, body?: unknown): Promise<T> {
  return (await call<T>('PUT', path, body ?? {})).result;
}
export async function patch<T>(path: string, body?: unknown): Promise<T> {
  return (await call<T>('PATCH', path, body ?? {})).result;
}
export async function del<T>(path: string): Promise<T> {
  return (await call<T>('DELETE', path)).result;
}

/** One page of a page-numbered list, with its totals. */
export async function page<T>(
  path: string,
  pageNumber: number,
  perPage: number,
  query: Record<string, string | number | undefined> = {},
) {
  const envelope = await call<T[]>('GET', path, undefined, { ...query, page: pageNumber, per_page: perPage });
  const info = envelope.result_info ?? {};
  return {
    items: envelope.result,
    page: info.page ?? pageNumber,
    totalPages: info.total_pages ?? 1,
    totalCount: info.total_count ?? envelope.result.length,
  };
}

export function enc(segment: string): string {
  return encodeURIComponent(segment);
}
