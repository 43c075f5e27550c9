import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Cloudflare, { toFile } from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

/** Answers with the variables the tests change, so each change is checked where it matters: in the function. */
const ENV_ECHO = `export default {
  fetch(request, env) {
    const pick = (k) => (typeof env[k] === 'string' ? env[k] : null);
    return Response.json({ A: pick('A'), B: pick('B'), GREETING: pick('GREETING') });
  },
};`;

/**
 * The endpoints wrangler and the official SDK call that Ledge answered 7003 before (issue 13 point 7):
 * secrets-bulk, the version settings PATCH, one deployment (GET/DELETE) and the workers.dev DELETEs.
 */
describe('wrangler and SDK endpoints of the functions API', () => {
  let ledge: TestLedge;
  let client: Cloudflare;
  const account_id = () => ledge.accountId;

  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });

  const deployEcho = async (name: string, metadata: Record<string, unknown> = {}) => {
    const uploaded = await uploadScript(ledge, name, { modules: { 'index.js': ENV_ECHO }, metadata });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect((await enableWorkersDev(ledge, name)).status).toBe(200);
  };

  const envOf = async (name: string) => {
    const response = await callFunction(
      functionsPort(ledge),
      `${name}.${await accountSubdomain(ledge)}.localhost`,
      '/',
    );
    expect(response.status, response.text).toBe(200);
    return JSON.parse(response.text) as Record<string, string | null>;
  };

  const deploymentsOf = async (name: string) =>
    (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/${name}/deployments`)).body.result
      .deployments as { id: string }[];

  const jsonFile = (content: unknown) => {
    const file = join(tempDir('ledge-secrets-'), 'secrets.json');
    writeFileSync(file, JSON.stringify(content));
    return file;
  };

  beforeAll(async () => {
    ledge = await startLedge();
    client = new Cloudflare({ baseURL: ledge.apiUrl, apiToken: ledge.apiToken, maxRetries: 0 });
  });
  afterAll(async () => {
    await ledge.close();
  });

  it('wrangler secret bulk sets and deletes secrets in one request, and the function sees them', async () => {
    await deployEcho('bulk');
    const first = await wrangler(['secret', 'bulk', jsonFile({ A: 'alpha', B: 'beta' }), '--name', 'bulk']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain('2 secrets successfully created');
    expect(await envOf('bulk')).toMatchObject({ A: 'alpha', B: 'beta' });

    const second = await wrangler(['secret', 'bulk', jsonFile({ A: null, B: 'beta-2' }), '--name', 'bulk']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toContain('Successfully deleted secret for key: A');
    expect(await envOf('bulk')).toMatchObject({ A: null, B: 'beta-2' });

    const list = await wrangler(['secret', 'list', '--name', 'bulk', '--format', 'json']);
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'B', type: 'secret_text' }]);
  });

  it('wrangler secret bulk on a Worker that does not exist creates it, as on Cloudflare', async () => {
    const result = await wrangler(['secret', 'bulk', jsonFile({ TOKEN: 't' }), '--name', 'fresh-bulk']);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('Creating new Worker "fresh-bulk"');
    const secrets = await client.workers.scripts.secrets.list('fresh-bulk', { account_id: account_id() });
    expect(secrets.getPaginatedItems().map((s) => s.name)).toEqual(['TOKEN']);
  });

  it('the SDK bulk update answers the resulting secrets, and refuses a bad entry without writing any', async () => {
    await deployEcho('bulk-sdk');
    const result = await client.workers.scripts.secrets.bulkUpdate('bulk-sdk', {
      account_id: account_id(),
      secrets: {
        A: { name: 'A', type: 'secret_text', text: 'one' },
        B: { name: 'B', type: 'secret_text', text: 'two' },
      },
    });
    expect(result).toEqual({ A: { name: 'A', type: 'secret_text' }, B: { name: 'B', type: 'secret_text' } });

    const refused = await api(ledge, 'PATCH', `/accounts/${account_id()}/workers/scripts/bulk-sdk/secrets-bulk`, {
      secrets: { A: null, B: { name: 'C', type: 'secret_text', text: 'x' } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ code: 10021 });
    expect(refused.body.errors[0]!.message).toContain('key and the name must be the same');
    expect(await envOf('bulk-sdk')).toMatchObject({ A: 'one', B: 'two' });

    const clash = await api(ledge, 'PATCH', `/accounts/${account_id()}/workers/scripts/bulk-sdk/secrets-bulk`, {
      secrets: { GREETING: { name: 'GREETING', type: 'secret_text', text: 'x' } },
    });
    expect(clash.status).toBe(200);
    await deployEcho('bulk-vars', { bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hi' }] });
    const taken = await api(ledge, 'PATCH', `/accounts/${account_id()}/workers/scripts/bulk-vars/secrets-bulk`, {
      secrets: { GREETING: { name: 'GREETING', type: 'secret_text', text: 'x' } },
    });
    expect(taken.status).toBe(400);
    expect(taken.body.errors[0]!.message).toContain('plain_text binding');

    const missing = await api(ledge, 'PATCH', `/accounts/${account_id()}/workers/scripts/nope/secrets-bulk`, {
      secrets: {},
    });
    expect(missing.status).toBe(404);
    expect(missing.body.errors[0]).toMatchObject({ code: 10007 });
  });

  it('PATCH settings makes and deploys a new version: listed bindings replace the old, inherit keeps', async () => {
    await deployEcho('settings', { bindings: [{ type: 'plain_text', name: 'GREETING', text: 'hello' }] });
    await client.workers.scripts.secrets.bulkUpdate('settings', {
      account_id: account_id(),
      secrets: { A: { name: 'A', type: 'secret_text', text: 'a' }, B: { name: 'B', type: 'secret_text', text: 'b' } },
    });
    const before = await deploymentsOf('settings');

    // The API takes one `settings` part holding JSON; the SDK would flatten a plain object into settings[...] fields.
    const settings = {
      bindings: [
        { type: 'plain_text', name: 'GREETING', text: 'bonjour' },
        { type: 'inherit', name: 'B' },
      ],
      logpush: true,
    };
    const edited = await client.workers.scripts.scriptAndVersionSettings.edit('settings', {
      account_id: account_id(),
      settings: (await toFile(Buffer.from(JSON.stringify(settings)), 'settings', {
        type: 'application/json',
      })) as never,
    });
    expect(edited.logpush).toBe(true);
    expect(edited.bindings).toEqual([
      { name: 'B', type: 'secret_text' },
      { name: 'GREETING', type: 'plain_text', text: 'bonjour' },
    ]);
    expect(await envOf('settings')).toEqual({ A: null, B: 'b', GREETING: 'bonjour' });
    expect(await deploymentsOf('settings')).toHaveLength(before.length + 1);

    const flattened = client.workers.scripts.scriptAndVersionSettings.edit('settings', {
      account_id: account_id(),
      settings: { logpush: false },
    });
    await expect(flattened).rejects.toMatchObject({ status: 400 });
    await expect(flattened.catch((e: Error) => e.message)).resolves.toContain('flattened form fields');

    const badBinding = await client.workers.scripts.scriptAndVersionSettings
      .edit('settings', {
        account_id: account_id(),
        settings: (await toFile(
          Buffer.from(JSON.stringify({ bindings: [{ type: 'inherit', name: 'NOPE' }] })),
          'settings',
          { type: 'application/json' },
        )) as never,
      })
      .catch((e: { status: number; message: string }) => e);
    expect(badBinding).toMatchObject({ status: 400 });
    expect(await envOf('settings')).toEqual({ A: null, B: 'b', GREETING: 'bonjour' });
  });

  it('a deployment is read and deleted by id; the one serving traffic cannot be deleted', async () => {
    await deployEcho('deploys');
    await deployEcho('deploys');
    const [current, older] = await deploymentsOf('deploys');
    const params = { account_id: account_id(), script_name: 'deploys' };

    const got = await client.workers.scripts.deployments.get(older!.id, params);
    expect(got).toMatchObject({ id: older!.id, versions: [{ percentage: 100 }] });

    await expect(client.workers.scripts.deployments.delete(current!.id, params)).rejects.toMatchObject({
      status: 400,
    });
    await client.workers.scripts.deployments.delete(older!.id, params);
    await expect(client.workers.scripts.deployments.get(older!.id, params)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.workers.scripts.deployments.get(current!.id, { ...params, script_name: 'bulk' }),
    ).rejects.toMatchObject({ status: 404 });

    const status = await wrangler(['deployments', 'list', '--name', 'deploys', '--json']);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { id: string }[]).map((d) => d.id)).toEqual([current!.id]);
    expect(await envOf('deploys')).toMatchObject({ A: null });
  });

  it('DELETE of a script subdomain turns workers.dev off; DELETE of the account subdomain unroutes all', async () => {
    await deployEcho('dev-off');
    expect(await envOf('dev-off')).toMatchObject({ A: null });
    const disabled = await client.workers.scripts.subdomain.delete('dev-off', { account_id: account_id() });
    expect(disabled).toMatchObject({ enabled: false, previews_enabled: false });
    const host = `dev-off.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).status).toBe(404);

    await deployEcho('dev-on');
    const old = await accountSubdomain(ledge);
    await client.workers.subdomains.delete({ account_id: account_id() });
    const gone = await api(ledge, 'GET', `/accounts/${account_id()}/workers/subdomain`);
    expect(gone.status).toBe(404);
    expect(gone.body.errors[0]).toMatchObject({ code: 10007 });
    expect((await callFunction(functionsPort(ledge), `dev-on.${old}.localhost`, '/')).status).toBe(404);
    const again = await api(ledge, 'DELETE', `/accounts/${account_id()}/workers/subdomain`);
    expect(again.status).toBe(404);

    await client.workers.subdomains.update({ account_id: account_id(), subdomain: 'renamed' });
    expect(await envOf('dev-on')).toMatchObject({ A: null });
  });
});
