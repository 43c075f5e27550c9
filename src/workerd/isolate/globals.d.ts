// workerd's node:async_hooks (with the nodejs_als flag): only what the platform's modules use.
declare module 'node:async_hooks' {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}
