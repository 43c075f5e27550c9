// Cloudflare's error pages for a function's host (1101, 1102): used by the entry router and, for an
// exception a script throws, by the script's own wrapper (answerExceptions), so every way a request reaches a
// script (front, router, the script alone on the socket) answers the same.

export type ErrorKind = 'threw' | 'cannot-start' | 'limits';

const ERRORS: Record<ErrorKind, { code: number; status: number; title: string; text: string }> = {
  threw: {
    code: 1101,
    status: 500,
    title: 'Worker threw exception',
    text: 'This function threw an exception while handling the request. If you own this function, follow its requests and exceptions with <code>ledge tail</code> (or <code>wrangler tail</code>) and fix the code that throws.',
  },
  'cannot-start': {
    code: 1101,
    status: 503,
    title: 'Worker threw exception',
    text: 'This function could not start: its code throws or does not finish while it loads. If you own it, run `ledge scripts` to see the reason, then deploy a fixed version or delete it.',
  },
  limits: {
    code: 1102,
    status: 503,
    title: 'Worker exceeded resource limits',
    text: 'This function exceeded its CPU time limit or its memory limit, and its invocation was stopped. If you own this function, look for an unbounded loop or allocation, or raise <code>limits.cpu_ms</code> in its wrangler configuration.',
  },
};

/** Cloudflare's answer: a short HTML error page for browsers, `error code: N` for other clients. */
export function errorPage(request: Request, host: string, kind: ErrorKind): Response {
  const { code, status, title, text } = ERRORS[kind];
  const headers = { 'cache-control': 'no-store' };
  if (!(request.headers.get('accept') ?? '').includes('text/html')) {
    return new Response(`error code: ${code}`, {
      status,
      headers: { ...headers, 'content-type': 'text/plain; charset=UTF-8' },
    });
  }
  const page = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title} | ${escapeHtml(host)} | Ledge</title></head>
<body>
<h1>Error ${code}</h1>
<h2>${title}</h2>
<p>${text}</p>
</body>
</html>
`;
  return new Response(page, { status, headers: { ...headers, 'content-type': 'text/html; charset=UTF-8' } });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

type Fetch = (request: Request, ...rest: unknown[]) => unknown;
type EntrypointClass = new (...args: unknown[]) => { fetch(request: Request, ...rest: unknown[]): unknown };

/**
 * Wraps the default export (handlers object or WorkerEntrypoint class) so that an exception its fetch throws
 * is answered with the 1101 page, status 500. It goes outside the trace and metrics wrappers: they have
 * recorded the exception (tail, logs, counts) before it gets here.
 */
export function answerExceptions(main: unknown): unknown {
  const answer = async (request: Request, call: () => unknown) => {
    try {
      return await call();
    } catch {
      return errorPage(request, hostOf(request), 'threw');
    }
  };
  if (typeof main === 'function' && typeof main.prototype?.fetch === 'function') {
    const Base = main as EntrypointClass;
    return class extends Base {
      override fetch(request: Request, ...rest: unknown[]) {
        return answer(request, () => super.fetch(request, ...rest));
      }
    };
  }
  const handlers = main as { fetch?: Fetch } | null;
  if (handlers !== null && typeof handlers === 'object' && typeof handlers.fetch === 'function') {
    const fetch = handlers.fetch;
    return Object.assign(Object.create(Object.getPrototypeOf(handlers)), handlers, {
      fetch(this: unknown, request: Request, ...rest: unknown[]) {
        return answer(request, () => fetch.call(this, request, ...rest));
      },
    });
  }
  return main;
}

function hostOf(request: Request): string {
  return (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '');
}
