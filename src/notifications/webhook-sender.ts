import { Pool } from 'undici';

export interface WebhookResult {
  ok: boolean;
  status: number | null;
  /** Why it failed ("HTTP 503", "timeout after 5000 ms", "connect ECONNREFUSED ..."); null on success. */
  error: string | null;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const MAX_ORIGINS = 1_000;

/**
 * POSTs JSON to webhook receivers over keep-alive connection pools, one per origin (undici: a dispatcher
 * sends thousands per second to the same few hosts, and undici costs about a third of node:http's CPU per
 * request, see docs/benchmarks.md). Connecting, waiting for the answer's headers and for each body chunk
 * are each bounded by the timeout; the answer body is drained and ignored.
 */
export class WebhookSender {
  readonly #timeoutMs: number;
  readonly #pools = new Map<string, Pool>();

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  async send(url: string, body: string, secret: string | null): Promise<WebhookResult> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Ledge-Notifications/1.0',
    };
    if (secret) headers['cf-webhook-auth'] = secret;
    try {
      const target = new URL(url);
      const response = await this.#pool(target.origin).request({
        method: 'POST',
        path: `${target.pathname}${target.search}`,
        headers,
        body,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code && TIMEOUT_CODES.has(code))
        return { ok: false, status: null, error: `timeout after ${this.#timeoutMs} ms` };
      return { ok: false, status: null, error: (error as Error).message };
    }
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      // Destinations are few; a runaway number of distinct origins must not keep sockets forever.
      if (this.#pools.size >= MAX_ORIGINS) this.close();
      pool = new Pool(origin, { connections: 64, connect: { timeout: this.#timeoutMs }, keepAliveTimeout: 30_000 });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  close(): void {
    for (const pool of this.#pools.values()) void pool.destroy().catch(() => undefined);
    this.#pools.clear();
  }
}
