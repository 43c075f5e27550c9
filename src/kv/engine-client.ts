import { Agent, request, type Dispatcher } from 'undici';
import { KV_NAMESPACE_HEADER } from '../workerd/index.ts';
import { KvErrors } from './errors.ts';

/** How the KV service reaches an account's engine: its socket, once the account's process listens. */
export interface KvEngineSockets {
  socketPath(kind: 'kv', accountId: string): string;
  ensure(accountId: string): Promise<void>;
}

export interface EngineAnswer {
  status: number;
  /** The engine's message for a refusal (kv.js puts it in the status text). */
  message: string;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/**
 * The API server's way into an account's KV engine: the same unix socket and the same protocol (the one
 * workerd's kvNamespace binding speaks) as a bound script's, the namespace named by the same header.
 */
export class KvEngineClient {
  readonly #sockets: KvEngineSockets;
  readonly #agents = new Map<string, Agent>();

  constructor(sockets: KvEngineSockets) {
    this.#sockets = sockets;
  }

  async call(
    accountId: string,
    namespaceId: string,
    options: {
      method: 'GET' | 'PUT' | 'DELETE' | 'POST';
      /** `/<encoded key>`, `/`, or `/bulk/get`. */
      path: string;
      query?: Record<string, string | undefined>;
      headers?: Record<string, string>;
      body?: Uint8Array | string;
    },
  ): Promise<EngineAnswer> {
    // An engine that cannot start now (its restart is under way) is the server's trouble, not the client's.
    await this.#sockets.ensure(accountId).catch(() => {
      throw KvErrors.unavailable();
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) search.set(name, value);
    const query = search.size > 0 ? `?${search}` : '';
    try {
      const response = await request(`http://kv${options.path}${query}`, {
        method: options.method,
        headers: { ...options.headers, [KV_NAMESPACE_HEADER]: namespaceId },
        body: options.body,
        dispatcher: this.#agent(accountId),
      });
      return {
        status: response.statusCode,
        message: response.statusText,
        headers: response.headers,
        body: response.body,
      };
    } catch (error) {
      // The socket is gone while the account's process restarts: the client may retry.
      if (isConnectionError(error)) throw KvErrors.unavailable();
      throw error;
    }
  }

  /** Starts the account's engine if it does not run (a new namespace must be reachable from bindings at once). */
  prepare(accountId: string): Promise<void> {
    return this.#sockets.ensure(accountId);
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  #agent(accountId: string): Agent {
    let agent = this.#agents.get(accountId);
    if (!agent) {
      agent = new Agent({ connect: { socketPath: this.#sockets.socketPath('kv', accountId) } });
      this.#agents.set(accountId, agent);
    }
    return agent;
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
}
