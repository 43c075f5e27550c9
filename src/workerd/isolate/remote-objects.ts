/**
 * A `script_name` Durable Object binding (remote-objects.ts beside the isolate folder): an internal module
 * workerd calls with the binding's inner bindings, whose result is what the script sees. Ids come from `ids`,
 * a local namespace keyed as the host's, so they are the host's ids; stubs send every call to `gate`, the
 * host's entrypoint for the class. Internal modules import nothing of the worker's, so the header's name
 * comes in as an inner binding too.
 */
interface ObjectTarget {
  id: string;
  name: string | null;
}
interface Gate extends Fetcher {
  call(target: ObjectTarget, method: string, args: unknown[]): Promise<unknown>;
}
interface RemoteEnv {
  gate: Gate;
  ids: DurableObjectNamespace;
  header: string;
}

/** A stub: `id`, `name`, `fetch`, and every other member an RPC method of the object on its host. */
function remoteStub(env: RemoteEnv, id: DurableObjectId): unknown {
  const target: ObjectTarget = { id: id.toString(), name: id.name ?? null };
  const fetchObject = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    request.headers.set(env.header, JSON.stringify(target));
    return env.gate.fetch(request);
  };
  return new Proxy(Object.create(null) as object, {
    get(_, member) {
      if (member === 'id') return id;
      if (member === 'name') return id.name;
      if (member === 'fetch') return fetchObject;
      // Not thenable (awaiting a stub gives the stub), and no symbol is a method.
      if (member === 'then' || typeof member === 'symbol') return undefined;
      return (...args: unknown[]) => env.gate.call(target, member, args);
    },
  });
}

function remoteNamespace(env: RemoteEnv): unknown {
  return {
    idFromName: (name: string) => env.ids.idFromName(name),
    idFromString: (id: string) => env.ids.idFromString(id),
    newUniqueId: (options?: DurableObjectNamespaceNewUniqueIdOptions) => env.ids.newUniqueId(options),
    get: (id: DurableObjectId) => remoteStub(env, id),
    getByName: (name: string) => remoteStub(env, env.ids.idFromName(name)),
    jurisdiction: (jurisdiction: DurableObjectJurisdiction) =>
      remoteNamespace({ ...env, ids: env.ids.jurisdiction(jurisdiction) }),
  };
}

export default function makeBinding(env: RemoteEnv): unknown {
  return remoteNamespace(env);
}
