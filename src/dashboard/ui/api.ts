import { ApiClient, ApiError, parseEnvelope, type Query } from '../../client/index.ts';

/**
 * The dashboard's only way to the server: /client/v4 through the same client the CLI uses (its calls and the SDK's
 * answer types), signed in by the session cookie, which the browser sends by itself (HttpOnly: script never sees
 * it). Writes carry the session's CSRF token, kept in memory only (never localStorage). /dashboard/ (the session
 * itself) answers the same envelope.
 */
export { ApiError, parseEnvelope };

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

/** The session ended (expired, signed out elsewhere, token revoked): back to the sign-in page. */
async function watchSession(response: Response): Promise<Response> {
  if (response.status === 401) onSignedOut();
  else if (!response.ok) {
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { errors?: { code?: number }[] } | undefined;
    if (body?.errors?.[0]?.code === 9106) onSignedOut();
  }
  return response;
}

export const client = new ApiClient({
  apiUrl: `${location.origin}${V4}`,
  auth: { session: { csrfToken: csrf } },
  fetch: async (input, init) => watchSession(await fetch(input, { ...init, credentials: 'same-origin' })),
});

/** The session routes under /dashboard/ (sign in, who is signed in, sign out). */
export async function session<T>(method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch('/dashboard/session', {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  return parseEnvelope<T>(response.status, await response.text()).result;
}

export async function get<T>(path: string, query?: Query): Promise<T> {
  return (await client.request<T>('GET', path, { query })).result;
}
export async function post<T>(path: string, body?: unknown): Promise<T> {
  return (await client.request<T>('POST', path, { body: body ?? {} })).result;
}
export async function put<T>(path: string, body?: unknown): Promise<T> {
  return (await client.request<T>('PUT', path, { body: body ?? {} })).result;
}
export async function patch<T>(path: string, body?: unknown): Promise<T> {
  return (await client.request<T>('PATCH', path, { body: body ?? {} })).result;
}
export async function del<T>(path: string): Promise<T> {
  return (await client.request<T>('DELETE', path)).result;
}

/** One page of a page-numbered list, with its totals. */
export async function page<T>(path: string, pageNumber: number, perPage: number, query: Query = {}) {
  const response = await client.request<T[]>('GET', path, { query: { ...query, page: pageNumber, per_page: perPage } });
  const info = response.result_info ?? {};
  return {
    items: response.result,
    page: info.page ?? pageNumber,
    totalPages: info.total_pages ?? 1,
    totalCount: info.total_count ?? response.result.length,
  };
}

export function enc(segment: string): string {
  return encodeURIComponent(segment);
}
