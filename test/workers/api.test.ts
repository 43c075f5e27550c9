import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const HELLO = `export default { async fetch(request, env) { return new Response("hello " + (env.GREETING ?? "") + " " + (env.AUTH_KEY_SECRET ?? "no-secret")); } };`;

describe('workers API and runtime', () => {
  let ledge: TestLedge;
  let sub: string;
  beforeAll(async () => {
    ledge = await startLedge();
    sub = await accountSubdomain(ledge);
  });
  afterAll(async () => ledge?.close());
  const base = () => `/accounts/${ledge.accountId}/workers`;

  it('gives the account a subdomain made of DNS-label characters', () => {
    expect(sub).toMatch(/^[a-z0-9-]+$/);
  });

  it('uploads a module script, deploys it and serves it by Host once workers_dev is on', async () => {
    const up = await uploadScript(ledge, 'hello', {
      modules: { 'index.js': HELLO },
      metadata: { bindings: [{ name: 'GREETING', type: 'plain_text', text: 'world' }] },
    });
    expect(up.status).toBe(200);
    expect(up.body.result).toMatchObject({ id: 'hello', has_modules: true, compatibility_date: '2025-01-01' });
    expect(up.body.result.deployment_id).toMatch(/^[0-9a-f-]{36}$/);
    const host = `hello.${sub}.localhost`;
    // Not yet on workers.dev: the router does not know the host.
    expect((await callFunction(functionsPort(ledge), host, '/')).status).toBe(404);
    const enabled = await enableWorkersDev(ledge, 'hello');
    expect(enabled.body.result).toMatchObject({ enabled: true, url: `http://${host}:${functionsPort(ledge)}` });
    const res = await callFunction(functionsPort(ledge), host, '/');
    expect(res.status).toBe(200);
    expect(res.text).toBe('hello world no-secret');
  });

  it('answers an unknown host with a clear 404 from the router', async () => {
    const res = await callFunction(functionsPort(ledge), `nope.${sub}.localhost`, '/');
    expect(res.status).toBe(404);
    expect(res.text).toContain('No function is deployed at nope.');
  });

  it('keeps secrets encrypted, never returns them, and keeps them across deploys', async () => {
    const put = await api(ledge, 'PUT', `${base()}/scripts/hello/secrets`, {
      name: 'AUTH_KEY_SECRET',
      text: 's3cr3t-value',
      type: 'secret_text',
    });
    expect(put.status).toBe(200);
    expect(put.body.result).toEqual({ name: 'AUTH_KEY_SECRET', type: 'secret_text' });
    const host = `hello.${sub}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('hello world s3cr3t-value');
    // Redeploy without any secret binding: the secret survives.
    await uploadScript(ledge, 'hello', { modules: { 'index.js': HELLO } });
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('hello  s3cr3t-value');

    const list = await api(ledge, 'GET', `${base()}/scripts/hello/secrets`);
    expect(list.body.result).toEqual([{ name: 'AUTH_KEY_SECRET', type: 'secret_text' }]);
    const settings = await api(ledge, 'GET', `${base()}/scripts/hello/settings`);
    expect(settings.body.result.bindings).toEqual([{ name: 'AUTH_KEY_SECRET', type: 'secret_text' }]);
    for (const path of ['/secrets', '/secrets/AUTH_KEY_SECRET', '/settings', '/versions', '']) {
      const text = await (
        await fetch(`${ledge.apiUrl}${base()}/${path === '' ? 'scripts' : `scripts/hello${path}`}`, {
          headers: ledge.tokenHeaders,
        })
      ).text();
      expect(text).not.toContain('s3cr3t-value');
    }
    const row = await ledge.server.platform.db.get<{ sealed: string }>(
      `SELECT sealed FROM worker_secrets WHERE name = 'AUTH_KEY_SECRET'`,
    );
    expect(row?.sealed).toBeTruthy();
    expect(row?.sealed).not.toContain('s3cr3t');
    expect(Buffer.from(row!.sealed, 'base64').toString('latin1')).not.toContain('s3cr3t');
  });

  it('deletes a secret, and the function stops seeing it', async () => {
    const del = await api(ledge, 'DELETE', `${base()}/scripts/hello/secrets/AUTH_KEY_SECRET`);
    expect(del.status).toBe(200);
    expect((await callFunction(functionsPort(ledge), `hello.${sub}.localhost`, '/')).text).toBe('hello  no-secret');
    const again = await api(ledge, 'DELETE', `${base()}/scripts/hello/secrets/AUTH_KEY_SECRET`);
    expect(again.status).toBe(404);
  });

  it('lists versions and deployments, and deploys an older version again', async () => {
    const versions = await api(ledge, 'GET', `${base()}/scripts/hello/versions`);
    const items = versions.body.result.items as { id: string; number: number }[];
    expect(items.map((v) => v.number)).toEqual([2, 1]);
    const deployments = await api(ledge, 'GET', `${base()}/scripts/hello/deployments`);
    expect(deployments.body.result.deployments[0].versions).toEqual([{ version_id: items[0]!.id, percentage: 100 }]);
    const redeploy = await api(ledge, 'POST', `${base()}/scripts/hello/deployments`, {
      strategy: 'percentage',
      versions: [{ version_id: items[1]!.id, percentage: 100 }],
    });
    expect(redeploy.status).toBe(200);
    expect((await callFunction(functionsPort(ledge), `hello.${sub}.localhost`, '/')).text).toBe(
      'hello world no-secret',
    );
    const split = await api(ledge, 'POST', `${base()}/scripts/hello/deployments`, {
      versions: [
        { version_id: items[0]!.id, percentage: 50 },
        { version_id: items[1]!.id, percentage: 50 },
      ],
    });
    expect(split.status).toBe(400);
  });

  it('answers services/{script}, script-settings and the script list in the shapes wrangler reads', async () => {
    const service = await api(ledge, 'GET', `${base()}/services/hello`);
    expect(service.body.result.default_environment).toMatchObject({
      environment: 'production',
      script: { id: 'hello' },
    });
    expect((await api(ledge, 'GET', `${base()}/services/missing`)).body.errors[0]!.code).toBe(10090);
    const patched = await api(ledge, 'PATCH', `${base()}/scripts/hello/script-settings`, {
      observability: { enabled: false },
      tags: [],
    });
    expect(patched.body.result).toMatchObject({ observability: { enabled: false }, tags: [] });
    const list = await api(ledge, 'GET', `${base()}/scripts`);
    expect(list.body.result.map((s: { id: string }) => s.id)).toContain('hello');
  });

  it('deletes a script: the API forgets it and the host answers 404', async () => {
    await uploadScript(ledge, 'doomed', { modules: { 'index.js': HELLO } });
    await enableWorkersDev(ledge, 'doomed');
    expect((await callFunction(functionsPort(ledge), `doomed.${sub}.localhost`, '/')).status).toBe(200);
    expect((await api(ledge, 'DELETE', `${base()}/scripts/doomed`)).status).toBe(200);
    expect((await callFunction(functionsPort(ledge), `doomed.${sub}.localhost`, '/')).status).toBe(404);
    expect((await api(ledge, 'GET', `${base()}/scripts/doomed/settings`)).body.errors[0]!.code).toBe(10007);
  });
});
