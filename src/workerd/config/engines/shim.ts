/**
 * The main module of an engine's worker: workerd's bundled engines take the namespace or database they serve
 * from `ctx.props` (one service designator with props per id), which would mean one socket, and a restart of
 * the account's process, for every namespace or database created. This module instead reads the id from a
 * header that the caller's external service injects (a binding cannot set headers of its own) and calls the
 * engine's default export (an object with `fetch`, as kv.js's, or a WorkerEntrypoint class, as d1.js's) in the
 * same isolate with those props. Only ids of the kind's own shape pass
 * (`idPattern`, anchored): anything else is refused.
 *
 * In a cluster, a JS RPC call a peer sends to an instance that is handing its objects over may fail once, as
 * retryable (workerd's `ClusterConfig.stopTimeoutMs`), and the stub's next call finds the object where it runs
 * next. The engine's binding to its Durable Object class (`namespaceBinding`) is therefore given to the engine
 * wrapped: each method call on one of its stubs is made once more, on a fresh stub, when it fails as
 * retryable, so a rolling restart fails no request.
 */
export function engineShim(options: {
  engineModule: string;
  header: string;
  prop: string;
  idPattern: RegExp;
  /** Absent for an engine that never runs in a cluster (its binding is given as is). */
  namespaceBinding?: string | undefined;
}): string {
  const { engineModule, header, prop, idPattern, namespaceBinding } = options;
  const module = JSON.stringify(engineModule);
  const binding = JSON.stringify(namespaceBinding ?? null);
  return `import engine from ${module};
export * from ${module};
const HEADER = ${JSON.stringify(header)};
const ID = new RegExp(${JSON.stringify(idPattern.source)});
const BINDING = ${binding};
function retrying(namespace) {
  const stubOf = (make) =>
    new Proxy(
      {},
      {
        get(_, name) {
          // Not a thenable: awaiting a stub must not call it.
          if (name === 'then' || typeof name !== 'string') return undefined;
          return async (...args) => {
            try {
              return await make()[name](...args);
            } catch (error) {
              if (error?.retryable !== true) throw error;
              return await make()[name](...args);
            }
          };
        },
      },
    );
  return new Proxy(namespace, {
    get(target, name) {
      if (name === 'get') return (id, options) => stubOf(() => target.get(id, options));
      if (name === 'getByName') return (key, options) => stubOf(() => target.getByName(key, options));
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
let wrappedEnv;
const envOf = (env) =>
  BINDING === null ? env : (wrappedEnv ??= { ...env, [BINDING]: retrying(env[BINDING]) });
export default {
  fetch(request, env, ctx) {
    const id = request.headers.get(HEADER);
    if (id === null || !ID.test(id)) {
      return new Response(null, { status: 400, statusText: 'No engine id' });
    }
    const inner = {
      props: { ${JSON.stringify(prop)}: id },
      waitUntil: (promise) => ctx.waitUntil(promise),
      passThroughOnException: () => ctx.passThroughOnException(),
    };
    if (typeof engine === 'function') {
      // A WorkerEntrypoint class (d1.js): made with the real context, which only it accepts, then given the one
      // with the props (the class reads them from this.ctx).
      const entry = new engine(ctx, envOf(env));
      Object.defineProperty(entry, 'ctx', { value: inner });
      return entry.fetch(request);
    }
    return engine.fetch(request, envOf(env), inner);
  },
};
`;
}
