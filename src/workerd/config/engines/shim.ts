/**
 * The main module of an engine's worker: workerd's bundled engines take the namespace or database they serve
 * from `ctx.props` (one service designator with props per id), which would mean one socket, and a restart of
 * the account's process, for every namespace created. This module instead reads the id from a header that the
 * caller's external service injects (a binding cannot set headers of its own) and calls the engine's default
 * export in the same isolate with those props. Ids are Ledge's own (32 hex digits); anything else is refused.
 */
export function engineShim(options: { engineModule: string; header: string; prop: string }): string {
  const { engineModule, header, prop } = options;
  const module = JSON.stringify(engineModule);
  return `import engine from ${module};
export * from ${module};
const HEADER = ${JSON.stringify(header)};
const ID = /^[0-9a-f]{32}$/;
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
    return engine.fetch(request, env, inner);
  },
};
`;
}
