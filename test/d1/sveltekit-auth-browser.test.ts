import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPage } from '../helpers/browser.ts';
import { cleanEnv, REPO_ROOT, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runAs } from '../helpers/user-shell.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, functionsPort } from '../workers/helpers.ts';

const MODULES = join(REPO_ROOT, 'node_modules');
const DATABASE = 'svapp-db';

async function node(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runAs(process.execPath, args, {
    cwd,
    env: { ...cleanEnv(), CI: 'true', NO_COLOR: '1', ...env },
    timeoutMs: 150_000,
  });
  if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * A SvelteKit app as the Svelte CLI makes it, none of it written here: `sv create` with its Cloudflare adapter
 * (Workers), Drizzle on D1 and Better Auth's email-and-password demo (sign-up, sign-in and sign-out pages whose
 * users and sessions are rows in D1). Then the app's own scripts: `prepare` (`svelte-kit sync`), `auth:schema` (Better Auth's CLI writes the
 * Drizzle schema of its tables) and `db:generate` (drizzle-kit writes the SQL migration, offline: its D1
 * credentials are only read by `push` and `migrate`). Every package is one of the repo's devDependencies.
 */
async function buildSvelteKitApp(): Promise<string> {
  const parent = tempDir('sveltekit-d1-');
  await node(parent, [
    join(MODULES, 'sv/dist/bin.mjs'),
    'create',
    'app',
    '--template',
    'minimal',
    '--types',
    'ts',
    '--add',
    'sveltekit-adapter=adapter:cloudflare+cfTarget:workers',
    'drizzle=database:d1',
    'better-auth=demo:password',
    '--no-download-check',
    '--no-install',
  ]);
  const project = join(parent, 'app');
  symlinkSync(MODULES, join(project, 'node_modules'));
  // The app's `prepare` script, which `npm install` runs: writes .svelte-kit/tsconfig.json, which its own extends.
  await node(project, [join(MODULES, '@sveltejs/kit/svelte-kit.js'), 'sync']);
  await node(project, [
    join(MODULES, 'auth/dist/index.mjs'),
    'generate',
    '--config',
    'src/lib/server/auth.ts',
    '--output',
    'src/lib/server/db/auth.schema.ts',
    '--yes',
  ]);
  await node(project, [join(MODULES, 'drizzle-kit/bin.cjs'), 'generate'], {
    CLOUDFLARE_ACCOUNT_ID: 'unused',
    CLOUDFLARE_DATABASE_ID: 'unused',
    CLOUDFLARE_D1_TOKEN: 'unused',
  });
  return project;
}

/** The JSON of a wrangler.jsonc without its comments (what `sv` writes has none today; tolerate them anyway). */
function readJsonc(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8').replace(/^\s*\/\/.*$/gm, '');
  return JSON.parse(text) as Record<string, unknown>;
}

describe('a SvelteKit app with Better Auth on D1 (sv create), deployed by wrangler, in Chromium', () => {
  let ledge: TestLedge;
  let browser: Browser;
  let project: string;
  let base: string;

  const wrangler = async (args: string[], input?: string) => {
    const result = await runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      input,
      timeoutMs: 120_000,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
    });
    expect(result.code, `wrangler ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
    return result.stdout;
  };

  beforeAll(async () => {
    const [built, started] = await Promise.all([buildSvelteKitApp(), startLedge()]);
    project = built;
    ledge = started;
    base = `http://app.${await accountSubdomain(ledge)}.localhost:${functionsPort(ledge)}`;

    // What the CLI's next steps say: create the database, bind it as DB, then apply the migrations.
    const created = await wrangler(['d1', 'create', DATABASE]);
    const databaseId = /"?database_id"?\s*[=:]\s*"([0-9a-f-]{36})"/.exec(created)?.[1];
    expect(databaseId, created).toBeDefined();
    const configPath = join(project, 'wrangler.jsonc');
    const config = readJsonc(configPath);
    expect(config['main']).toBe('.svelte-kit/cloudflare/_worker.js');
    config['d1_databases'] = [
      { binding: 'DB', database_name: DATABASE, database_id: databaseId, migrations_dir: 'drizzle' },
    ];
    // Better Auth trusts requests from its base URL, and signs sessions with its secret (a Worker secret).
    config['vars'] = { ORIGIN: base };
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const migrations = readdirSync(join(project, 'drizzle')).filter((name) => name.endsWith('.sql'));
    expect(migrations).toHaveLength(1);
    expect(await wrangler(['d1', 'migrations', 'apply', DATABASE, '--remote'])).toContain(migrations[0]);

    await node(project, [join(MODULES, 'vite/bin/vite.js'), 'build']);
    await wrangler(['deploy']);
    await wrangler(['secret', 'put', 'BETTER_AUTH_SECRET'], 'a-secret-of-thirty-two-characters-or-more\n');
    browser = await launchBrowser();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await ledge?.close();
  });

  it('registers, signs out, signs in again and refuses a wrong password; the rows are in D1', async () => {
    const { page, context, errors } = await openPage(browser);
    try {
      const login = await page.goto(`${base}/demo/better-auth/login`);
      expect(login?.status(), await login?.text()).toBe(200);
      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByLabel('Name (for registration)').fill('Ada <b>Lovelace</b>');
      await page.getByRole('button', { name: 'Register' }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Hi, Ada <b>Lovelace</b>!');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Login');

      await page.getByLabel('Email').fill('ada@example.com');
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Login' }).click();
      await expect.poll(() => page.locator('p').last().textContent()).toMatch(/invalid/i);

      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Login' }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Hi, Ada <b>Lovelace</b>!');

      // A reload reads the session back from D1 through the cookie.
      await page.reload();
      expect(await page.locator('h1').textContent()).toBe('Hi, Ada <b>Lovelace</b>!');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }

    const rows = JSON.parse(
      await wrangler(['d1', 'execute', DATABASE, '--remote', '--json', '--command', 'SELECT name, email FROM user']),
    ) as { results: unknown[] }[];
    expect(rows[0]!.results).toEqual([{ name: 'Ada <b>Lovelace</b>', email: 'ada@example.com' }]);
    const sessions = JSON.parse(
      await wrangler([
        'd1',
        'execute',
        DATABASE,
        '--remote',
        '--json',
        '--command',
        'SELECT count(*) AS n FROM session',
      ]),
    ) as { results: { n: number }[] }[];
    // Sign-up and sign-in each made a session; signing out deleted the first.
    expect(sessions[0]!.results[0]!.n).toBe(1);
  });
});
