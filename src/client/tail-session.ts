import type { ApiClient } from './api-client.ts';

/** The filters of a tail session, as `wrangler tail` sends them (POST .../tails `{filters}`). */
export type TailSessionFilter =
  | { sampling_rate: number }
  | { outcome: string[] }
  | { method: string[] }
  | { header: { key: string; query?: string } }
  | { client_ip: string[] }
  | { query: string };

/** One request event of a tail session (Cloudflare's TailEventMessage, what `wrangler tail --format json` prints). */
export interface TailEventMessage {
  outcome: string;
  scriptName: string;
  eventTimestamp: number;
  wallTime?: number;
  logs: { message: unknown[]; level: string; timestamp: number }[];
  exceptions: { name: string; message: string; stack?: string; timestamp: number }[];
  event: {
    request?: { url: string; method: string; headers: Record<string, string> };
    response?: { status: number };
    /** A Cron Trigger run (a scheduled event) instead of a request. */
    cron?: string;
    scheduledTime?: number;
  } | null;
}

export interface TailSessionHandle {
  /** Resolves once the session's WebSocket is open (from then on, every request is seen). */
  opened: Promise<void>;
  /** The events, until the session ends (closed by the server, or `close()`). */
  events: AsyncGenerator<TailEventMessage>;
  close(): Promise<void>;
}

/**
 * Opens a tail session the way wrangler does (POST .../tails, then the returned WebSocket with the
 * trace-v1 subprotocol) and deletes it when closed. Works against Cloudflare's API as well as Ledge's.
 */
export async function openTailSession(
  api: ApiClient,
  accountId: string,
  script: string,
  filters: TailSessionFilter[],
): Promise<TailSessionHandle> {
  const base = `/accounts/${accountId}/workers/scripts/${encodeURIComponent(script)}/tails`;
  const { result } = await api.request<{ id: string; url: string }>('POST', base, { body: { filters } });
  // Imported here, not at the top: every user of the client (`ledge object put`, ...) would load ws for nothing.
  const { default: WebSocket } = await import('ws');
  const socket = new WebSocket(result.url, 'trace-v1');
  const queue: TailEventMessage[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: Error | undefined;
  socket.on('message', (data) => {
    try {
      queue.push(JSON.parse(String(data)) as TailEventMessage);
    } catch {
      return;
    }
    wake?.();
  });
  const finish = (error?: Error) => {
    ended = true;
    failure ??= error;
    wake?.();
  };
  socket.on('close', () => finish());
  socket.on('error', (error) => finish(error));
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => {
      socket.send(JSON.stringify({ debug: false }));
      resolve();
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('the tail session closed before it opened')));
  });
  opened.catch(() => undefined);
  let deleted: Promise<void> | undefined;
  const close = () =>
    (deleted ??= (async () => {
      socket.close(1000);
      await api.request('DELETE', `${base}/${result.id}`).catch(() => undefined);
      finish();
    })());
  async function* events(): AsyncGenerator<TailEventMessage> {
    try {
      while (true) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (failure) throw failure;
    } finally {
      await close();
    }
  }
  return { opened, events: events(), close };
}
