/* global Response */
// The entry worker of every workerd generation: it owns the functions socket and hands each request to
// the deployed script named by its Host, `<script>.<subdomain>.<domain>`, through a service binding, so
// function traffic stays inside workerd. ROUTES maps "<script>.<subdomain>" to a binding name.
// In a front process (FRONT, see writeFrontConfig) the bindings are other accounts' backend processes:
// a forward that fails means the backend died under the request (the watchdog killed it for exceeding
// its CPU or memory limit), so the front answers for it as Cloudflare does: 503, error 1102.
export default {
  async fetch(request, env) {
    const host = (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const suffix = `.${env.DOMAIN}`;
    const prefix = host.endsWith(suffix) ? host.slice(0, -suffix.length) : '';
    // Own keys only: a Host of constructor.<domain> or __proto__.<domain> must not find Object.prototype's.
    const binding = Object.hasOwn(env.ROUTES, prefix) ? env.ROUTES[prefix] : undefined;
    if (binding === undefined) {
      return new Response(
        `No function is deployed at ${host || '(no Host header)'}. Functions answer at <script>.<subdomain>.${env.DOMAIN}.\n`,
        {
          status: 404,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        },
      );
    }
    if (!env.FRONT) return env[binding].fetch(request);
    try {
      return await env[binding].fetch(request);
    } catch {
      return exceededResourceLimits(request, host);
    }
  },
};

/** Cloudflare's answer: a short HTML error page for browsers, `error code: 1102` for other clients. */
function exceededResourceLimits(request, host) {
  const headers = { 'cache-control': 'no-store' };
  if (!(request.headers.get('accept') ?? '').includes('text/html')) {
    return new Response('error code: 1102', {
      status: 503,
      headers: { ...headers, 'content-type': 'text/plain; charset=UTF-8' },
    });
  }
  const page = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Worker exceeded resource limits | ${escapeHtml(host)} | Ledge</title></head>
<body>
<h1>Error 1102</h1>
<h2>Worker exceeded resource limits</h2>
<p>This function exceeded its CPU time limit or its memory limit, and its invocation was stopped.
If you own this function, look for an unbounded loop or allocation, or raise <code>limits.cpu_ms</code>
in its wrangler configuration.</p>
</body>
</html>
`;
  return new Response(page, { status: 503, headers: { ...headers, 'content-type': 'text/html; charset=UTF-8' } });
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
