/**
 * When only one script is routed, the functions socket reaches it directly (no router hop), so its default
 * export answers other hosts with the router's 404 itself (entry-router.ts words it the same way).
 */

const hostOf = (request: Request) =>
  (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');

type EntrypointClass = new (...args: unknown[]) => { fetch(request: Request, ...rest: unknown[]): unknown };

/** The default export, answering only `host` (`<script>.<subdomain>.<domain>`). */
export function guardHost(main: unknown, host: string, domain: string): unknown {
  const notFound = (asked: string) =>
    new Response(
      `No function is deployed at ${asked || '(no Host header)'}. Functions answer at <script>.<subdomain>.${domain}.\n`,
      {
        status: 404,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      },
    );
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    const Base = main as EntrypointClass;
    return class extends Base {
      override fetch(request: Request, ...rest: unknown[]) {
        const asked = hostOf(request);
        return asked === host ? super.fetch(request, ...rest) : notFound(asked);
      }
    };
  }
  const handlers = main as { fetch?: (this: unknown, request: Request, ...rest: unknown[]) => unknown } | null;
  if (handlers !== null && typeof handlers === 'object' && typeof handlers.fetch === 'function') {
    const fetch = handlers.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(handlers)), handlers, {
      fetch(this: unknown, request: Request, ...rest: unknown[]) {
        const asked = hostOf(request);
        return asked === host ? fetch.call(this, request, ...rest) : notFound(asked);
      },
    });
  }
  return main;
}
