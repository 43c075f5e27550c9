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

/**
 * Runs `fn` outside any request: a long-lived timer that a background service arms while serving a
 * request (the health checker re-planned by a pool PATCH) must not hand that request's id to everything
 * it sets off later (timers keep the context they were created in).
 */
export function outsideRequest<T>(fn: () => T): T {
  return storage.exit(fn);
}
