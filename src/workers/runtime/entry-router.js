/* global Response */
// The entry worker of every workerd generation: it owns the functions socket and hands each request to
// the deployed script named by its Host, `<script>.<subdomain>.<domain>`, through a service binding, so
// function traffic stays inside workerd. ROUTES maps "<script>.<subdomain>" to a binding name.
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
    return env[binding].fetch(request);
  },
};
