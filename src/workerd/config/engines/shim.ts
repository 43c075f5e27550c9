/**
 * The main module of an engine's worker: workerd's bundled engines take the namespace or database they serve
 * from `ctx.props` (one service designator with props per id), which would mean one socket, and a restart of
 * the account's process, for every namespace or database created. This module instead reads the id from a
 * header that the caller's external service injects (a binding cannot set headers of its own) and calls the
 * engine's default export (an object with `fetch`, as kv.js's, or a WorkerEntrypoint class, as d1.js's) in the
 * same isolate with those props. Only ids of the kind's own shape pass
 * (`idPattern`, anchored): anything else is refused.
 */
export function engineShim(options: { engineModule: string; header: string; prop: string; idPattern: RegExp }): string {
  const { engineModule, header, prop, idPattern } = options;
  const module = JSON.stringify(engineModule);
  return `import engine from ${module};
export * from ${module};
const HEADER = ${JSON.stringify(header)};
const ID = new RegExp(${JSON.stringify(idPattern.source)});
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
      const entry = new engine(ctx, env);
      Object.defineProperty(entry, 'ctx', { value: inner });
      return entry.fetch(request);
    }
    return engine.fetch(request, env, inner);
  },
};
`;
}
