/**
 * A Durable Object namespace binding of a script that runs in workerd's cluster mode (several nodes,
 * objects-cluster.ts beside the isolate folder): an internal module workerd calls with the binding's inner
 * `namespace` (the class's own namespace), whose result is what the script sees.
 *
 * While a node stops, it hands its objects to the other nodes; a JS RPC call that a peer sent through a stub to
 * the stopping instance may then fail once, as retryable, and the stub's next call finds the object where it
 * runs next (workerd's `ClusterConfig.stopTimeoutMs`). So each method call on a stub is made again, on a fresh
 * stub, when it fails as retryable (RETRY_DELAYS_MS): a rolling restart, or a redeploy, fails no request. `fetch` is sent on by workerd
 * itself and goes as is. Everything else is the namespace's and the stub's own.
 */
interface ClusterEnv {
  namespace: DurableObjectNamespace;
}

type Stub = Record<string | symbol, unknown>;

/**
 * Waits before each further try of a call that failed as retryable. A redeploy stops the Worker's instance on
 * every node at about the same time, so a call can meet more than one stopping instance before a new one has
 * claimed the object: the tries go on for about as long as a hand-off may take (8 s by default), then the error
 * is the caller's.
 */
const RETRY_DELAYS_MS = [0, 50, 100, 200, 400, 800, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000];

function retryable(error: unknown): boolean {
  return (error as { retryable?: unknown } | null)?.retryable === true;
}

/** A stub whose method calls are made once more on a fresh stub after a retryable failure. */
function retryingStub(make: () => Stub): unknown {
  const first = make();
  return new Proxy(first, {
    get(target, member) {
      // Not thenable: awaiting a stub gives the stub.
      if (member === 'then') return undefined;
      const value = Reflect.get(target, member) as unknown;
      // id, name and what is not a method, as they are; fetch (and connect) as workerd sends them.
      if (typeof member === 'symbol' || typeof value !== 'function') return value;
      if (member === 'fetch' || member === 'connect') return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        let stub = target;
        for (let attempt = 0; ; attempt++) {
          try {
            return await (stub[member] as (...a: unknown[]) => Promise<unknown>)(...args);
          } catch (error) {
            if (!retryable(error) || attempt >= RETRY_DELAYS_MS.length) throw error;
            // The first retry at once (the object is claimable as soon as it is released); later ones wait.
            const delay = RETRY_DELAYS_MS[attempt]!;
            if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
            stub = make();
          }
        }
      };
    },
  });
}

function retryingNamespace(namespace: DurableObjectNamespace): unknown {
  return new Proxy(namespace, {
    get(target, member) {
      if (member === 'get')
        return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) =>
          retryingStub(() => target.get(id, options) as unknown as Stub);
      if (member === 'getByName')
        return (name: string, options?: DurableObjectNamespaceGetDurableObjectOptions) =>
          retryingStub(() => target.getByName(name, options) as unknown as Stub);
      if (member === 'jurisdiction')
        return (jurisdiction: DurableObjectJurisdiction) => retryingNamespace(target.jurisdiction(jurisdiction));
      const value = Reflect.get(target, member) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export default function makeBinding(env: ClusterEnv): unknown {
  return retryingNamespace(env.namespace);
}
