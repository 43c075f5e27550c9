import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const GOOD = 'export default { fetch() { return new Response("v1"); } };';

/** Every refused input answers a clear 4xx and leaves the script exactly as it was. */
describe('functions: bad input', () => {
  let ledge: TestLedge;
  let sub: string;
  const scriptPath = () => `${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/stable`;
  const versionCount = async () =>
    (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/stable/versions`)).body.result.items
      .length as number;
  const stillServesV1 = async () =>
    expect((await callFunction(functionsPort(ledge), `stable.${sub}.localhost`, '/')).text).toBe('v1');

  beforeAll(async () => {
    ledge = await startLedge();
    sub = await accountSubdomain(ledge);
    expect((await uploadScript(ledge, 'stable', { modules: { 'index.js': GOOD } })).status).toBe(200);
    await enableWorkersDev(ledge, 'stable');
  });
  afterAll(async () => ledge?.close());

  const expectRefused = async (
    result: { status: number; body: { success: boolean; errors: { code: number; message: string }[] } },
    status: number,
    code: number,
    message: RegExp,
  ) => {
    expect(result.status).toBe(status);
    expect(result.body.success).toBe(false);
    expect(result.body.errors[0]!.code).toBe(code);
    expect(result.body.errors[0]!.message).toMatch(message);
    expect(await versionCount()).toBe(1);
    await stillServesV1();
  };

  it('refuses a malformed multipart body', async () => {
    const response = await fetch(scriptPath(), {
      method: 'PUT',
      headers: { ...ledge.tokenHeaders, 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"main_module":"index.js"}\r\n--XY',
    });
    await expectRefused({ status: response.status, body: (await response.json()) as never }, 400, 10026, /multipart/);
  });

  it('refuses a body that is not multipart at all', async () => {
    const response = await fetch(scriptPath(), {
      method: 'PUT',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/javascript' },
      body: GOOD,
    });
    await expectRefused(
      { status: response.status, body: (await response.json()) as never },
      400,
      10026,
      /expected Content-Type multipart\/form-data/,
    );
  });

  it('refuses an upload whose metadata part is not JSON', async () => {
    const form = new FormData();
    form.set('metadata', '{"main_module": ');
    form.set('index.js', new File([GOOD], 'index.js', { type: 'application/javascript+module' }));
    const response = await fetch(scriptPath(), { method: 'PUT', headers: ledge.tokenHeaders, body: form });
    await expectRefused({ status: response.status, body: (await response.json()) as never }, 400, 10026, /not JSON/);
  });

  it('refuses a main_module that names no uploaded part', async () => {
    const result = await uploadScript(ledge, 'stable', { modules: { 'worker.js': GOOD }, mainModule: 'index.js' });
    await expectRefused(result, 400, 10021, /No such module "index\.js".*"worker\.js"/);
  });

  it('refuses module names that would leave the runtime directory', async () => {
    for (const name of ['../escape.js', '/abs.js', 'a/../../b.js']) {
      const result = await uploadScript(ledge, 'stable', { modules: { [name]: GOOD } });
      await expectRefused(result, 400, 10021, /Invalid module name/);
    }
  });

  it('refuses a script with a syntax error, and the previous deployment keeps serving', async () => {
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': 'export default { fetch() { return new Response("v2") ' },
    });
    await expectRefused(result, 400, 10021, /SyntaxError/);
  });

  it('refuses a script that throws while loading', async () => {
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': 'throw new Error("boom at load"); export default {};' },
    });
    await expectRefused(result, 400, 10021, /boom at load/);
  });

  it('refuses an unknown binding type', async () => {
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { bindings: [{ name: 'V', type: 'vectorize', index_name: 'x' }] },
    });
    await expectRefused(result, 400, 10021, /Unknown binding type "vectorize" for binding "V"/);
  });

  it('refuses a KV binding to a namespace the account does not have, or without a namespace id', async () => {
    const missing = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { bindings: [{ name: 'KV', type: 'kv_namespace', namespace_id: 'x' }] },
    });
    await expectRefused(missing, 400, 10041, /KV namespace 'x' is not valid/);
    const noId = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { bindings: [{ name: 'KV', type: 'kv_namespace' }] },
    });
    await expectRefused(noId, 400, 10021, /needs a string "namespace_id"/);
  });

  it('refuses a binding name that is not a JavaScript identifier', async () => {
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { bindings: [{ name: 'MY-VAR', type: 'plain_text', text: 'x' }] },
    });
    await expectRefused(result, 400, 10021, /"MY-VAR" is not a valid JavaScript identifier/);
  });

  it('refuses an invalid compatibility date', async () => {
    for (const date of ['2025-02-30', '01-01-2025', 'latest']) {
      const result = await uploadScript(ledge, 'stable', {
        modules: { 'index.js': GOOD },
        metadata: { compatibility_date: date },
      });
      await expectRefused(result, 400, 10021, new RegExp(`Invalid compatibility_date "${date}"`));
    }
    const future = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { compatibility_date: '2999-01-01' },
    });
    await expectRefused(future, 400, 10021, /in the future/);
  });

  it('refuses a binding to a bucket that does not exist', async () => {
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      metadata: { bindings: [{ name: 'MY_BUCKET', type: 'r2_bucket', bucket_name: 'no-such-bucket' }] },
    });
    await expectRefused(result, 400, 10021, /R2 bucket "no-such-bucket", which does not exist/);
  });

  it('refuses secret names that are not identifiers (API and CLI)', async () => {
    for (const name of ['1ST', 'MY-SECRET', 'has space', '']) {
      const put = await api(ledge, 'PUT', `/accounts/${ledge.accountId}/workers/scripts/stable/secrets`, {
        name,
        text: 'v',
        type: 'secret_text',
      });
      expect(put.status).toBe(400);
      expect(put.body.errors[0]!.message).toMatch(/not a valid JavaScript identifier/);
    }
    expect(
      (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts/stable/secrets`)).body.result,
    ).toEqual([]);
    const cli = await runCli(['secret', 'put', 'MY-SECRET', '--name', 'stable'], {
      env: cliEnv(ledge),
      input: 'value\n',
    });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('"MY-SECRET" is not a valid JavaScript identifier');
  });

  it('refuses a wrangler.toml binding that is not an identifier before uploading', async () => {
    const project = tempDir('ledge-bad-toml-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), GOOD);
    writeFileSync(
      join(project, 'wrangler.toml'),
      'name = "stable"\nmain = "src/index.js"\n\n[[r2_buckets]]\nbinding = "my-bucket"\nbucket_name = "b"\n',
    );
    const result = await runCli(['deploy'], { env: cliEnv(ledge), cwd: project });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/r2_buckets\.0\.binding: must be a valid JavaScript identifier/);
    expect(await versionCount()).toBe(1);
  });

  it('refuses a deploy to another account (API and CLI)', async () => {
    const other = await ledge.server.platform.accounts.createAccount({ name: 'Someone else' });
    const result = await uploadScript(ledge, 'stable', {
      modules: { 'index.js': GOOD },
      path: `/accounts/${other.id}/workers/scripts/stable`,
    });
    expect(result.status).toBe(403);
    expect(result.body.errors[0]!.code).toBe(9109);
    const project = tempDir('ledge-other-account-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), GOOD);
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "intruder"\nmain = "src/index.js"\naccount_id = "${other.id}"\n`,
    );
    const { LEDGE_ACCOUNT_ID: _unused, ...env } = cliEnv(ledge);
    const cli = await runCli(['deploy'], { env, cwd: project });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/code 9109/);
    expect(
      (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/scripts`)).body.result.map(
        (s: { id: string }) => s.id,
      ),
    ).toEqual(['stable']);
  });
});
