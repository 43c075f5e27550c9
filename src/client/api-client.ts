import type { ErrorDetail } from '../shared/errors.ts';

/**
 * How requests are authenticated: an API token, a global key, or a browser session (the dashboard: the browser
 * sends its HttpOnly session cookie by itself; writes carry the session's CSRF token, read when each is sent).
 */
export type Auth = { token: string } | { email: string; key: string } | { session: { csrfToken: () => string } };

export interface ClientSettings {
  /** Base URL including `/client/v4`, e.g. http://127.0.0.1:8787/client/v4 or https://api.cloudflare.com/client/v4. */
  apiUrl: string;
  auth: Auth;
  fetch?: typeof fetch;
  userAgent?: string;
}

export interface ApiResponse<T> {
  result: T;
  result_info?: Record<string, unknown> & {
    page?: number;
    per_page?: number;
    count?: number;
    total_count?: number;
    total_pages?: number;
    cursor?: string;
  };
  messages: { code: number; message: string }[];
}

/** A v4 failure: the HTTP status plus the envelope's errors (the first one's code is the one to branch on). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: number;
  readonly errors: ErrorDetail[];

  constructor(status: number, errors: ErrorDetail[]) {
    const first = errors[0] ?? { code: 0, message: `HTTP ${status}` };
    const chain = first.error_chain?.map((e) => `${e.message} (${e.code})`).join('; ');
    super(chain ? `${first.message}: ${chain}` : first.message);
    this.name = 'ApiError';
    this.status = status;
    this.code = first.code;
    this.errors = errors;
  }
}

/**
 * Reads a v4 envelope from a response (also for calls made with `raw`, such as multipart uploads);
 * throws `ApiError` when `success` is false or the answer is not JSON.
 */
export async function readEnvelope<T>(response: Response): Promise<ApiResponse<T>> {
  return parseEnvelope<T>(response.status, await response.text());
}

/** `readEnvelope` for an answer already read (status and body text), e.g. one received with node:http. */
export function parseEnvelope<T>(status: number, text: string): ApiResponse<T> {
  let body: {
    success?: boolean;
    errors?: ErrorDetail[];
    result?: T;
    result_info?: ApiResponse<T>['result_info'];
    messages?: ApiResponse<T>['messages'];
  };
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(status, [{ code: 0, message: `non-JSON answer (HTTP ${status}): ${text.slice(0, 200)}` }]);
  }
  if (!body.success) throw new ApiError(status, body.errors ?? []);
  return { result: body.result as T, result_info: body.result_info, messages: body.messages ?? [] };
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * A small /client/v4 client used by the CLI, the migration tool and the dashboard. It speaks only the public API, so
 * it works against Ledge and against Cloudflare's own API alike.
 */
export class ApiClient {
  readonly apiUrl: string;
  readonly #auth: Auth;
  readonly #fetch: typeof fetch;
  readonly #userAgent: string;

  constructor(settings: ClientSettings) {
    this.apiUrl = settings.apiUrl.replace(/\/+$/, '');
    this.#auth = settings.auth;
    this.#fetch = settings.fetch ?? fetch;
    this.#userAgent = settings.userAgent ?? 'ledge-cli';
  }

  /** Sends one request and unwraps the envelope; throws `ApiError` when `success` is false. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return readEnvelope<T>(await this.raw(method, path, options));
  }

  /** Sends one request and returns the raw Response (object bodies, streams). */
  async raw(
    method: string,
    path: string,
    options: RequestOptions & { rawBody?: RequestInit['body']; duplex?: 'half' } = {},
  ): Promise<Response> {
    const url = new URL(this.apiUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...this.#authHeaders(method), ...options.headers };
    let body: RequestInit['body'] | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body };
    if (options.duplex) init.duplex = options.duplex;
    return this.#fetch(url, init);
  }

  /** Walks a page-numbered list to the end (stops on an empty page or when `total_pages` is reached). */
  async *paginate<T>(path: string, query: Query = {}, perPage = 50): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const { result, result_info } = await this.request<T[]>('GET', path, {
        query: { ...query, page, per_page: perPage },
      });
      yield* result;
      const totalPages = result_info?.total_pages;
      if (result.length === 0 || (totalPages !== undefined && page >= totalPages)) return;
    }
  }

  /** The headers every request carries (user agent, credentials): for callers that send with node:http. */
  requestHeaders(method = 'GET'): Record<string, string> {
    return this.#authHeaders(method);
  }

  #authHeaders(method: string): Record<string, string> {
    const auth = this.#auth;
    // A browser names itself; a session's reads need nothing more than the cookie it sends.
    if ('session' in auth)
      return method === 'GET' || method === 'HEAD' ? {} : { 'x-csrf-token': auth.session.csrfToken() };
    const credentials: Record<string, string> =
      'token' in auth
        ? { authorization: `Bearer ${auth.token}` }
        : { 'x-auth-email': auth.email, 'x-auth-key': auth.key };
    return { 'user-agent': this.#userAgent, ...credentials };
  }
}
