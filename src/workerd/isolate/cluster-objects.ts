/**
 * A Durable Object namespace binding of a script that runs in workerd's cluster mode (several nodes,
 * objects-cluster.ts beside the isolate folder): an internal module workerd calls with the binding's inner
 * `namespace` (the class's own namespace), whose result is what the script sees.
 *
 * While a node stops, it hands its objects to the other nodes; a JS RPC call that a peer sent through a stub to
 * the stopping instance may then fail once, as retryable, and the stub's next call finds the object where it
 * runs next (workerd's `ClusterConfig.stopTimeoutMs`). So each method call on a stub is made once more, on a
 * fresh stub, when it fails as retryable: a rolling restart fails no request. `fetch` is sent on by workerd
 * itself and goes as is. Everything else is the namespace's and the stub's own.
 */
interface ClusterEnv {
  namespace: DurableObjectNamespace;
}

type Stub = Record<string | symbol, unknown>;

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
        try {
          return await (target[member] as (...a: unknown[]) => Promise<unknown>)(...args);
        } catch (error) {
          if (!retryable(error)) throw error;
          return await (make()[member] as (...a: unknown[]) => Promise<unknown>)(...args);
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
