import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { api } from '../workers/helpers.ts';

const WORKER = (name: string) => `export default {
  fetch(request) { return new Response('${name} at ' + request.url); },
};
`;

/** curl on the traffic port with --resolve: the hostname resolves to Ledge, as DNS would send it. */
function curl(host: string, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['-s', '-w', '\n%{http_code}', '--resolve', `${host}:${port}:127.0.0.1`, `http://${host}:${port}${path}`],
      { timeout: 30_000 },
      (error, stdout) => {
        if (error) return reject(error);
        const cut = stdout.lastIndexOf('\n');
        resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
      },
    );
  });
}

/** The real wrangler 4 deploying `routes` (zone routes and `custom_domain = true`), served on the traffic port. */
describe('wrangler deploy with routes', () => {
  let ledge: TestLedge;
  let port: number;

  const project = (name: string, routes: string) => {
    const dir = tempDir('ledge-routes-project-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/index.js'), WORKER(name));
    writeFileSync(
      join(dir, 'wrangler.toml'),
      `name = "${name}"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\nroutes = ${routes}\n`,
    );
    return dir;
  };
  const wrangler = (args: string[], cwd: string) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd,
      timeoutMs: 90_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });

  beforeAll(async () => {
    ledge = await startLedge();
    port = ledge.server.platform.traffic.port!;
    const zone = await api(ledge, 'POST', '/zones', { name: 'example.com', account: { id: ledge.accountId } });
    expect(zone.status, JSON.stringify(zone.body.errors)).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('deploys zone routes (by zone_name and by the host alone), serves them, and a redeploy replaces them', async () => {
    const dir = project(
      'route-worker',
      '[{ pattern = "api.example.com/*", zone_name = "example.com" }, "www.example.com/app/*"]',
    );
    const deployed = await wrangler(['deploy'], dir);
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    expect(deployed.stdout).toContain('api.example.com/* (zone name: example.com)');

    const api1 = await curl('api.example.com', port, '/v1?q=1');
    expect(api1).toEqual({ status: 200, body: `route-worker at http://api.example.com:${port}/v1?q=1` });
    expect((await curl('www.example.com', port, '/app/page')).body).toContain('route-worker at');
    expect((await curl('www.example.com', port, '/other')).status).toBe(404);

    writeFileSync(
      join(dir, 'wrangler.toml'),
      `name = "route-worker"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\nroutes = [{ pattern = "www.example.com/*", zone_name = "example.com" }]\n`,
    );
    const again = await wrangler(['deploy'], dir);
    expect(again.code, again.stderr + again.stdout).toBe(0);
    // The route that left the configuration is no longer served; the new one is.
    expect((await curl('api.example.com', port, '/v1')).status).toBe(404);
    expect((await curl('www.example.com', port, '/other')).body).toContain('route-worker at');
  });

  it("refuses a route in a zone the account does not have, with wrangler's message", async () => {
    const dir = project('stray-worker', '[{ pattern = "api.example.org/*", zone_name = "example.org" }]');
    const deployed = await wrangler(['deploy'], dir);
    expect(deployed.code).not.toBe(0);
    expect(deployed.stderr + deployed.stdout).toMatch(/Could not find zone for `example.org`/);
  });

  it('deploys a Custom Domain (custom_domain = true), serves every path, and `wrangler delete` takes it away', async () => {
    const dir = project('shop-worker', '[{ pattern = "shop.example.com", custom_domain = true }]');
    const deployed = await wrangler(['deploy'], dir);
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    expect(deployed.stdout).toContain('shop.example.com (custom domain)');
    const listed = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/domains?service=shop-worker`);
    expect(listed.body.result).toMatchObject([{ hostname: 'shop.example.com', zone_name: 'example.com' }]);

    expect(await curl('shop.example.com', port, '/cart/1')).toEqual({
      status: 200,
      body: `shop-worker at http://shop.example.com:${port}/cart/1`,
    });

    const deleted = await wrangler(['delete', '--force'], dir);
    expect(deleted.code, deleted.stderr + deleted.stdout).toBe(0);
    expect((await curl('shop.example.com', port, '/cart/1')).status).toBe(404);
    expect((await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/domains`)).body.result).toEqual([]);
  });
});
