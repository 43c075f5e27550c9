import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const THROWS =
  'const x = 1;\nfunction boot() {\n  throw new Error("config missing");\n}\nboot();\nexport default { fetch() { return new Response("x"); } };\n';
/** A TypeScript project whose entry throws at load, from an import, on a known line and column. */
const CONFIG_TS = `export interface Config {\n  region: string;\n}\n\nexport function loadConfig(): Config {\n  const region: string | undefined = undefined;\n  if (!region) throw new Error('REGION is not set');\n  return { region };\n}\n`;
const INDEX_TS = `import { loadConfig } from './config';\n\nconst config = loadConfig();\n\nexport default {\n  fetch(): Response {\n    return new Response(config.region);\n  },\n};\n`;

let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(async () => ledge?.close());

function project(name: string, toml = ''): string {
  const dir = tempDir(`ledge-deploy-error-${name}-`);
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/config.ts'), CONFIG_TS);
  writeFileSync(join(dir, 'src/index.ts'), INDEX_TS);
  writeFileSync(
    join(dir, 'wrangler.toml'),
    `name = "${name}"\nmain = "src/index.ts"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n${toml}`,
  );
  return dir;
}

/** No workerd-internal line, no clipped location. */
function expectClean(message: string): void {
  expect(message).not.toMatch(/NOSENTRY|compile cache|\.c\+\+:\d+|characters\)/);
}

describe('deploy errors a person can act on', () => {
  it('a first deploy that throws at load says nothing was deployed, with the error and its location', async () => {
    const res = await uploadScript(ledge, 'thrower', { modules: { 'index.js': THROWS } });
    expect(res.status).toBe(400);
    const message = res.body.errors[0].message as string;
    expect(res.body.errors[0].code).toBe(10021);
    expectClean(message);
    expect(message).toContain('nothing was deployed');
    expect(message).not.toContain('previous deployment');
    expect(message).toContain('Uncaught Error: config missing\n  at index.js:3:9 in boot\n  at index.js:5:1');
  });

  it('a later deploy that fails says the previous deployment keeps serving, and it does', async () => {
    const good = 'export default { fetch() { return new Response("version one"); } };\n';
    expect((await uploadScript(ledge, 'kept', { modules: { 'index.js': good } })).status).toBe(200);
    await enableWorkersDev(ledge, 'kept');
    const bad = await uploadScript(ledge, 'kept', { modules: { 'index.js': 'export default {\n  fetch() {\n};\n' } });
    expect(bad.status).toBe(400);
    const message = bad.body.errors[0].message as string;
    expectClean(message);
    expect(message).toContain('the previous deployment keeps serving');
    expect(message).toMatch(/Uncaught SyntaxError: .+\n {2}at index\.js:3:1/);
    const host = `kept.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/')).text).toBe('version one');
  });

  it('ledge deploy shows the file, line and column in the TypeScript source (source map)', async () => {
    const dir = project('ts-thrower');
    const result = await runCli(['deploy'], { env: cliEnv(ledge), cwd: dir });
    expect(result.code).toBe(1);
    expectClean(result.stderr);
    expect(result.stderr).toContain('Uncaught Error: REGION is not set');
    expect(result.stderr).toContain('src/config.ts:7:22 in loadConfig');
    expect(result.stderr).toContain('src/index.ts:3:16');
    expect(result.stderr).not.toContain('index.js:');
    expect(result.stderr).toContain('nothing was deployed');
  });

  it("wrangler deploy's error body carries the same, from wrangler's uploaded source maps", async () => {
    const dir = project('wr-thrower', 'upload_source_maps = true\n');
    const result = await runWrangler(['deploy'], {
      apiUrl: ledge.apiUrl,
      cwd: dir,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
    expect(result.code).not.toBe(0);
    const output = result.stdout + result.stderr;
    expectClean(output);
    expect(output).toContain('Uncaught Error: REGION is not set');
    expect(output).toMatch(/src\/config\.ts:7:22/);
    expect(output).toContain('nothing was deployed');
  });
});
