import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../workers/helpers.ts';

const WORKER = `export default {
  async fetch(request, env) {
    const { results } = await env.DB.prepare('SELECT title FROM posts ORDER BY id').all();
    return Response.json(results);
  },
};
`;

/** The real wrangler 4 CLI's D1 commands against `ledge server`, unchanged. */
describe('wrangler d1 against Ledge', () => {
  let ledge: TestLedge;
  let project: string;
  let uuid: string;

  const wrangler = (args: string[]) =>
    runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 90_000,
    });
  const ok = async (args: string[]) => {
    const result = await wrangler(args);
    expect(result.code, `wrangler ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0);
    return result.stdout;
  };

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    project = tempDir('ledge-wrangler-d1-project-');
    mkdirSync(join(project, 'src'));
    writeFileSync(join(project, 'src/index.js'), WORKER);
  });
  afterAll(async () => ledge?.close());

  it('d1 create, list and info', async () => {
    const created = await ok(['d1', 'create', 'blog-db']);
    expect(created).toContain("Successfully created DB 'blog-db'");
    uuid = /"?database_id"?\s*[=:]\s*"([0-9a-f-]{36})"/.exec(created)![1]!;
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "blog"\nmain = "src/index.js"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n\n[[d1_databases]]\nbinding = "DB"\ndatabase_name = "blog-db"\ndatabase_id = "${uuid}"\n`,
    );
    const listed = JSON.parse(await ok(['d1', 'list', '--json'])) as { uuid: string; name: string }[];
    expect(listed).toEqual([expect.objectContaining({ uuid, name: 'blog-db' })]);
    const info = JSON.parse(await ok(['d1', 'info', 'blog-db', '--json'])) as Record<string, unknown>;
    expect(info).toMatchObject({ uuid, name: 'blog-db', num_tables: 0 });
  });

  it('d1 migrations create, list and apply --remote', async () => {
    await ok(['d1', 'migrations', 'create', 'blog-db', 'posts']);
    const [file] = readdirSync(join(project, 'migrations'));
    expect(file).toBe('0001_posts.sql');
    writeFileSync(
      join(project, 'migrations', file!),
      "-- the posts\nCREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL);\nINSERT INTO posts (title) VALUES ('hello; world');\n",
    );
    expect(await ok(['d1', 'migrations', 'list', 'blog-db', '--remote'])).toContain('0001_posts.sql');
    const applied = await ok(['d1', 'migrations', 'apply', 'blog-db', '--remote']);
    expect(applied).toMatch(/0001_posts\.sql.*✅/s);
    expect(await ok(['d1', 'migrations', 'list', 'blog-db', '--remote'])).toContain('No migrations to apply');
  });

  it('d1 execute --remote --command and --file', async () => {
    const command = await ok([
      'd1',
      'execute',
      'blog-db',
      '--remote',
      '--json',
      '--command',
      "INSERT INTO posts (title) VALUES ('second'); SELECT COUNT(*) AS n FROM posts",
    ]);
    const results = JSON.parse(command) as { results: unknown[]; success: boolean }[];
    expect(results.at(-1)).toMatchObject({ success: true, results: [{ n: 2 }] });
    writeFileSync(
      join(project, 'seed.sql'),
      "INSERT INTO posts (title) VALUES ('from a file');\nINSERT INTO posts (title) VALUES ('and another');\n",
    );
    const file = await ok(['d1', 'execute', 'blog-db', '--remote', '--file', 'seed.sql', '-y']);
    expect(file).toMatch(/Executed 2 queries/);
    const failed = await wrangler(['d1', 'execute', 'blog-db', '--remote', '--command', 'SELECT * FROM nowhere']);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout + failed.stderr).toContain('no such table: nowhere: SQLITE_ERROR [code: 7500]');
  });

  it('wrangler deploy with the binding serves what the database holds', async () => {
    await ok(['deploy']);
    const host = `blog.${await accountSubdomain(ledge)}.localhost`;
    const answer = await callFunction(functionsPort(ledge), host, '/');
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual([
      { title: 'hello; world' },
      { title: 'second' },
      { title: 'from a file' },
      { title: 'and another' },
    ]);
  });

  it('d1 export --remote, and the export imports into a new database', async () => {
    await ok(['d1', 'export', 'blog-db', '--remote', '--output', 'dump.sql']);
    const dump = readFileSync(join(project, 'dump.sql'), 'utf8');
    expect(dump).toContain('CREATE TABLE posts');
    expect(dump).toContain("'hello; world'");
    await ok(['d1', 'create', 'blog-copy']);
    await ok(['d1', 'execute', 'blog-copy', '--remote', '--file', 'dump.sql', '-y']);
    const copied = JSON.parse(
      await ok(['d1', 'execute', 'blog-copy', '--remote', '--json', '--command', 'SELECT COUNT(*) AS n FROM posts']),
    ) as { results: unknown[] }[];
    expect(copied[0]!.results).toEqual([{ n: 4 }]);
  });

  it('d1 delete', async () => {
    expect(await ok(['d1', 'delete', 'blog-copy', '-y'])).toContain("Deleted 'blog-copy' successfully.");
    const listed = JSON.parse(await ok(['d1', 'list', '--json'])) as { name: string }[];
    expect(listed.map((d) => d.name)).toEqual(['blog-db']);
  });
});
