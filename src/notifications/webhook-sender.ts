import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface WebhookResult {
  ok: boolean;
  status: number | null;
  /** Why it failed ("HTTP 503", "timeout after 5000 ms", "connect ECONNREFUSED ..."); null on success. */
  error: string | null;
}

/**
 * POSTs JSON to webhook receivers over keep-alive connections (a dispatcher sends thousands per second to
 * the same few hosts, so reusing sockets matters). Every call has a hard timeout covering connect,
 * request and response; the answer body is drained and ignored.
 */
export class WebhookSender {
  readonly #timeoutMs: number;
  readonly #http = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  readonly #https = new HttpsAgent({ keepAlive: true, maxSockets: 64 });
  readonly #urls = new Map<string, URL>();

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  send(url: string, body: string, secret: string | null): Promise<WebhookResult> {
    const target = this.#parse(url);
    const isHttps = target.protocol === 'https:';
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'Ledge-Notifications/1.0',
    };
    if (secret) headers['cf-webhook-auth'] = secret;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: WebhookResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = (isHttps ? httpsRequest : httpRequest)(
        target,
        { method: 'POST', headers, agent: isHttps ? this.#https : this.#http },
        (res) => {
          res.resume();
          res.once('end', () => {
            const status = res.statusCode ?? 0;
            const ok = status >= 200 && status < 300;
            finish({ ok, status, error: ok ? null : `HTTP ${status}` });
          });
          res.once('error', (error) => finish({ ok: false, status: res.statusCode ?? null, error: error.message }));
        },
      );
      const timer = setTimeout(() => {
        finish({ ok: false, status: null, error: `timeout after ${this.#timeoutMs} ms` });
        req.destroy();
      }, this.#timeoutMs);
      req.once('error', (error) => finish({ ok: false, status: null, error: error.message }));
      req.end(body);
    });
  }

  /** Destinations are few and hit thousands of times: parse each URL once. */
  #parse(url: string): URL {
    let parsed = this.#urls.get(url);
    if (!parsed) {
      if (this.#urls.size > 1_000) this.#urls.clear();
      parsed = new URL(url);
      this.#urls.set(url, parsed);
    }
    return parsed;
  }

  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}
