import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the API request whose work is running (x-request-id), for what that request sets off:
 * outbox rows it writes, test deliveries, Cron Trigger runs it asks for. Set by the API's request log
 * middleware; undefined outside a request (the health checker, the scheduler).
 */
const storage = new AsyncLocalStorage<string>();

export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return storage.run(requestId, fn);
}

export function currentRequestId(): string | undefined {
  return storage.getStore();
}
