import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, callFunction, functionsPort, uploadScript } from '../workers/helpers.ts';

/** Answers what the script sees of the request: its URL, its Host, and whether the routing header leaked. */
const ECHO = `export default { fetch(request, env) {
  return Response.json({ who: env.WHO, url: request.url, host: request.headers.get('host'),
    leaked: [...request.headers.keys()].filter((name) => name.startsWith('x-ledge')) });
} };`;

async function deploy(ledge: TestLedge, name: string) {
  const up = await uploadScript(ledge, name, {
    modules: { 'index.js': ECHO },
    metadata: { bindings: [{ name: 'WHO', type: 'plain_text', text: name }] },
  });
  expect(up.status, JSON.stringify(up.body.errors)).toBe(200);
}

describe('worker routes: the API and serving on the traffic port', () => {
  let ledge: TestLedge;
  let zoneId: string;
  const traffic = (host: string, path = '/') => callFunction(ledge.server.platform.traffic.port!, host, path);
  const routes = (suffix = '') => `/zones/${zoneId}/workers/routes${suffix}`;
  const domains = (suffix = '') => `/accounts/${ledge.accountId}/workers/domains${suffix}`;

  beforeAll(async () => {
    ledge = await startLedge();
    const zone = await api(ledge, 'POST', '/zones', { name: 'example.com', account: { id: ledge.accountId } });
    expect(zone.status, JSON.stringify(zone.body.errors)).toBe(200);
    zoneId = zone.body.result.id as string;
    await deploy(ledge, 'site');
    await deploy(ledge, 'other');
  });
  afterAll(async () => ledge?.close());

  it('creates, reads, updates and deletes a zone route with the SDK shapes, and serves it meanwhile', async () => {
    const created = await api(ledge, 'POST', routes(), { pattern: 'API.example.com/v1/*', script: 'site' });
    expect(created.status, JSON.stringify(created.body.errors)).toBe(200);
    const id = created.body.result.id as string;
    expect(created.body.result).toEqual({ id, pattern: 'api.example.com/v1/*', script: 'site' });
    expect((await api(ledge, 'GET', routes())).body.result).toEqual([created.body.result]);
    expect((await api(ledge, 'GET', routes(`/${id}`))).body.result).toEqual(created.body.result);

    const served = await callFunction(ledge.server.platform.traffic.port!, 'api.example.com', '/v1/users?x=1', {
      headers: { host: 'api.example.com:8789' },
    });
    expect(served.status, served.text).toBe(200);
    // The script sees the URL and Host the client sent, and nothing of how the request reached it.
    expect(JSON.parse(served.text)).toEqual({
      who: 'site',
      url: 'http://api.example.com:8789/v1/users?x=1',
      host: 'api.example.com:8789',
      leaked: [],
    });
    expect((await traffic('api.example.com', '/v2/users')).status).toBe(404);

    const updated = await api(ledge, 'PUT', routes(`/${id}`), { pattern: 'api.example.com/*', script: 'other' });
    expect(updated.body.result).toEqual({ id, pattern: 'api.example.com/*', script: 'other' });
    expect(JSON.parse((await traffic('api.example.com', '/v2/users')).text).who).toBe('other');

    expect((await api(ledge, 'DELETE', routes(`/${id}`))).body.result).toEqual({ id });
    const gone = await traffic('api.example.com', '/v2/users');
    expect(gone.status).toBe(404);
    expect(gone.text).toContain('error code: 1001');
    expect((await api(ledge, 'GET', routes(`/${id}`))).status).toBe(404);
  });

  it('refuses bad patterns, unknown scripts and duplicates with Cloudflare codes', async () => {
    const refuse = async (body: unknown, status: number, code: number, message: RegExp) => {
      const answer = await api(ledge, 'POST', routes(), body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.errors[0]).toMatchObject({ code });
      expect(answer.body.errors[0]!.message).toMatch(message);
    };
    await refuse({ pattern: 'example.com/*.jpg', script: 'site' }, 400, 10022, /last character/);
    await refuse({ pattern: 'www.*.example.com/*', script: 'site' }, 400, 10022, /first character/);
    await refuse({ pattern: 'example.org/*', script: 'site' }, 400, 10022, /must include zone name/);
    await refuse({ pattern: '*ample.com/*', script: 'site' }, 400, 10022, /must include zone name/);
    await refuse({ pattern: 'www.example.com/*', script: 'nope' }, 400, 10019, /does not exist/);
    await refuse({ script: 'site' }, 400, 10021, /pattern/);
    const first = await api(ledge, 'POST', routes(), { pattern: 'dup.example.com/*', script: 'site' });
    expect(first.status).toBe(200);
    await refuse({ pattern: 'DUP.example.com/*', script: 'other' }, 409, 10020, /same pattern/);
    await api(ledge, 'DELETE', routes(`/${first.body.result.id}`));
  });

  it("refuses another account's zone as an unknown one, for routes and Custom Domains", async () => {
    const platform = ledge.server.platform;
    const stranger = await platform.accounts.createAccount({ name: 'stranger' });
    await platform.db.run(
      "INSERT INTO zones (id, account_id, name, status, type, created_on, modified_on) VALUES (?, ?, 'theirs.test', 'active', 'full', '2026-01-01', '2026-01-01')",
      ['f'.repeat(32), stranger.id],
    );
    const route = await api(ledge, 'POST', `/zones/${'f'.repeat(32)}/workers/routes`, {
      pattern: 'theirs.test/*',
      script: 'site',
    });
    expect(route.status).toBe(404);
    expect(route.body.errors[0]).toMatchObject({ code: 1003 });
    const domain = await api(ledge, 'PUT', domains(), { hostname: 'www.theirs.test', service: 'site' });
    expect(domain.status).toBe(404);
    const byId = await api(ledge, 'PUT', domains(), {
      hostname: 'www.theirs.test',
      service: 'site',
      zone_id: 'f'.repeat(32),
    });
    expect(byId.status).toBe(404);
    expect((await traffic('www.theirs.test')).status).toBe(404);
  });

  it("replaces a script's routes as wrangler does, by zone_id or zone_name, refusing another script's pattern", async () => {
    const scriptRoutes = (script: string) => `/accounts/${ledge.accountId}/workers/scripts/${script}/routes`;
    const put = await api(ledge, 'PUT', scriptRoutes('site'), [
      { pattern: 'a.example.com/*', zone_id: zoneId },
      { pattern: 'b.example.com/*', zone_name: 'example.com' },
      { pattern: 'c.example.com/x' },
    ]);
    expect(put.status, JSON.stringify(put.body.errors)).toBe(200);
    expect(put.body.result).toMatchObject([
      { pattern: 'a.example.com/*', script: 'site', zone_id: zoneId },
      { pattern: 'b.example.com/*', script: 'site', zone_name: 'example.com' },
      { pattern: 'c.example.com/x', script: 'site' },
    ]);
    const listed = await api(ledge, 'GET', scriptRoutes('site'));
    expect(listed.body.result.map((r: { pattern: string }) => r.pattern)).toEqual([
      'a.example.com/*',
      'b.example.com/*',
      'c.example.com/x',
    ]);
    const taken = await api(ledge, 'PUT', scriptRoutes('other'), [{ pattern: 'a.example.com/*' }]);
    expect(taken.status).toBe(409);
    expect(taken.body.errors[0]).toMatchObject({ code: 10020 });
    const foreign = await api(ledge, 'PUT', scriptRoutes('site'), [
      { pattern: 'x.theirs.test/*', zone_name: 'theirs.test' },
    ]);
    expect(foreign.status).toBe(404);
    const missing = await api(ledge, 'PUT', scriptRoutes('nope'), [{ pattern: 'a.example.com/*' }]);
    expect(missing.body.errors[0]).toMatchObject({ code: 10007 });
    // A refused PUT changed nothing; an empty one removes the script's routes.
    expect((await api(ledge, 'GET', scriptRoutes('site'))).body.result).toHaveLength(3);
    expect((await api(ledge, 'PUT', scriptRoutes('site'), [])).status).toBe(200);
    expect((await api(ledge, 'GET', scriptRoutes('site'))).body.result).toEqual([]);
    expect((await traffic('a.example.com')).status).toBe(404);
  });

  it('attaches, lists and detaches a Custom Domain, which serves every path; a route on it comes first', async () => {
    const attached = await api(ledge, 'PUT', domains(), { hostname: 'App.example.com', service: 'site' });
    expect(attached.status, JSON.stringify(attached.body.errors)).toBe(200);
    const id = attached.body.result.id as string;
    expect(attached.body.result).toEqual({
      id,
      zone_id: zoneId,
      zone_name: 'example.com',
      hostname: 'app.example.com',
      service: 'site',
      environment: 'production',
      cert_id: '',
    });
    expect((await api(ledge, 'GET', domains('?service=site'))).body.result).toEqual([attached.body.result]);
    expect((await api(ledge, 'GET', domains('?service=other'))).body.result).toEqual([]);
    expect(JSON.parse((await traffic('app.example.com', '/any/path?q=1')).text).who).toBe('site');

    const logging = await api(ledge, 'POST', routes(), { pattern: 'app.example.com/log/*', script: 'other' });
    expect(JSON.parse((await traffic('app.example.com', '/log/x')).text).who).toBe('other');
    expect(JSON.parse((await traffic('app.example.com', '/else')).text).who).toBe('site');
    await api(ledge, 'DELETE', routes(`/${logging.body.result.id}`));

    const outside = await api(ledge, 'PUT', domains(), {
      hostname: 'app.example.org',
      service: 'site',
      zone_id: zoneId,
    });
    expect(outside.status).toBe(400);
    const noScript = await api(ledge, 'PUT', domains(), { hostname: 'x.example.com', service: 'nope' });
    expect(noScript.body.errors[0]).toMatchObject({ code: 10019 });

    expect((await api(ledge, 'DELETE', domains(`/${id}`))).status).toBe(200);
    expect((await traffic('app.example.com', '/any/path')).status).toBe(404);
    expect((await api(ledge, 'GET', domains(`/${id}`))).status).toBe(404);
  });

  it('does not let a client of the functions port name a script by the routing header', async () => {
    const route = await api(ledge, 'POST', routes(), { pattern: 'hidden.example.com/*', script: 'site' });
    expect(route.status).toBe(200);
    // Without the installation's secret, no spelling of the script reaches it through the header.
    for (const guess of [
      `${ledge.accountId}/site`,
      `@${ledge.accountId}/site`,
      'site',
      `undefined@${ledge.accountId}/site`,
    ]) {
      const forged = await callFunction(functionsPort(ledge), 'hidden.example.com', '/', {
        headers: { 'x-ledge-routed-script': guess },
      });
      expect(forged.status, guess).toBe(404);
    }
    // And the traffic port drops a client's own header in favour of its own.
    const served = await callFunction(ledge.server.platform.traffic.port!, 'hidden.example.com', '/', {
      headers: { 'x-ledge-routed-script': `${ledge.accountId}/other` },
    });
    expect(JSON.parse(served.text)).toMatchObject({ who: 'site', leaked: [] });
    await api(ledge, 'DELETE', routes(`/${route.body.result.id}`));
  });

  it("removes a deleted script's routes and Custom Domains", async () => {
    await deploy(ledge, 'doomed');
    const route = await api(ledge, 'POST', routes(), { pattern: 'doomed.example.com/*', script: 'doomed' });
    expect(route.status).toBe(200);
    expect((await api(ledge, 'PUT', domains(), { hostname: 'doom.example.com', service: 'doomed' })).status).toBe(200);
    expect(JSON.parse((await traffic('doomed.example.com')).text).who).toBe('doomed');
    const deleted = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/doomed`);
    expect(deleted.status, JSON.stringify(deleted.body.errors)).toBe(200);
    expect((await api(ledge, 'GET', routes())).body.result).toEqual([]);
    expect((await api(ledge, 'GET', domains('?service=doomed'))).body.result).toEqual([]);
    expect((await traffic('doomed.example.com')).status).toBe(404);
    expect((await traffic('doom.example.com')).status).toBe(404);
  });
});
