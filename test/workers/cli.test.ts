import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, functionsPort } from './helpers.ts';

describe('ledge create app / deploy / secret', () => {
  let ledge: TestLedge;
  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('create app scaffolds a TypeScript project whose own test passes', async () => {
    const dir = join(tempDir('ledge-app-'), 'photo-store');
    const result = await runCli(['create', 'app', dir, '--bucket', 'photos'], { env: cliEnv(ledge) });
    expect(result.code, result.stderr).toBe(0);
    for (const file of [
      'wrangler.toml',
      'src/index.ts',
      'test/index.test.ts',
      'package.json',
      'tsconfig.json',
      '.gitignore',
    ]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    const toml = readFileSync(join(dir, 'wrangler.toml'), 'utf8');
    expect(toml).toMatch(/^name = "photo-store"$/m);
    expect(toml).toMatch(/^main = "src\/index\.ts"$/m);
    expect(toml).toMatch(/^compatibility_date = "\d{4}-\d{2}-\d{2}"$/m);
    expect(toml).toContain(`account_id = "${ledge.accountId}"`);
    expect(toml).toMatch(/^workers_dev = true$/m);
    expect(toml).toMatch(/\[\[r2_buckets\]\]\nbinding = "MY_BUCKET".*\nbucket_name = "photos"/);
    expect(JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')).compilerOptions.types).toContain(
      '@cloudflare/workers-types',
    );
    expect(readFileSync(join(dir, 'src/index.ts'), 'utf8')).toContain(
      "request.headers.get('X-Custom-Auth-Key') === env.AUTH_KEY_SECRET",
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--test', '--test-reporter=tap', 'test/index.test.ts'],
      { cwd: dir },
    );
    expect(stdout).toMatch(/# pass 3/);
    expect(stdout).toMatch(/# fail 0/);
    const again = await runCli(['create', 'app', dir], { env: cliEnv(ledge) });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists and is not empty');
  });

  it('deploy reads wrangler.jsonc, bundles TypeScript with its imports, and prints the URL', async () => {
    const dir = tempDir('ledge-jsonc-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/greeting.ts'), 'export const greet = (name: string): string => `hello ${name}`;\n');
    writeFileSync(
      join(dir, 'src/main.ts'),
      "import { greet } from './greeting.ts';\ninterface Env { WHO: string; CFG: { n: number } }\nexport default { fetch(_r: Request, env: Env): Response { return new Response(greet(env.WHO) + ' ' + env.CFG.n); } };\n",
    );
    writeFileSync(
      join(dir, 'wrangler.jsonc'),
      '{\n  // comments are allowed\n  "name": "jsonc-app",\n  "main": "src/main.ts",\n  "compatibility_date": "2025-01-01",\n  "vars": { "WHO": "ledge", "CFG": { "n": 7 } },\n}\n',
    );
    const text = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    const host = `jsonc-app.${await accountSubdomain(ledge)}.localhost`;
    expect(text.stdout).toContain(`Deployed jsonc-app: http://${host}:${functionsPort(ledge)}`);
    const json = await runCli(['deploy', '--json'], { env: cliEnv(ledge), cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ url: `http://${host}:${functionsPort(ledge)}`, name: 'jsonc-app' });
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('hello ledge 7');
  });

  it('deploy reports a build error with its location and uploads nothing', async () => {
    const dir = tempDir('ledge-broken-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src/index.ts'), 'export default { fetch() { return new Response("x" }; };\n');
    writeFileSync(join(dir, 'wrangler.json'), JSON.stringify({ name: 'broken-app', main: 'src/index.ts' }));
    const result = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/build failed: .*src\/index\.ts:1:\d+: Expected "\)"/);
    const scripts = await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts`, {
      headers: ledge.tokenHeaders,
    });
    expect(((await scripts.json()) as { result: { id: string }[] }).result.map((s) => s.id)).not.toContain(
      'broken-app',
    );
  });

  it('secret put reads a piped value; list shows names only; delete removes it', async () => {
    const dir = tempDir('ledge-secret-');
    mkdirSync(join(dir, 'src'));
    writeFileSync(
      join(dir, 'src/index.js'),
      'export default { fetch(r, env) { return new Response(env.TOKEN ?? "unset"); } };\n',
    );
    writeFileSync(
      join(dir, 'wrangler.toml'),
      'name = "secretive"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\n',
    );
    expect((await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir })).code).toBe(0);
    const put = await runCli(['secret', 'put', 'TOKEN'], { env: cliEnv(ledge), cwd: dir, input: 'piped value\n' });
    expect(put.code, put.stderr).toBe(0);
    const host = `secretive.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('piped value');
    const list = await runCli(['secret', 'list', '--json'], { env: cliEnv(ledge), cwd: dir });
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'TOKEN', type: 'secret_text' }]);
    const del = await runCli(['secret', 'delete', 'TOKEN'], { env: cliEnv(ledge), cwd: dir });
    expect(del.code, del.stderr).toBe(0);
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('unset');
  });
});
