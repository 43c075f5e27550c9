import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import { runWrangler } from '../helpers/wrangler.ts';
import { accountSubdomain, callFunction, functionsPort } from '../workers/helpers.ts';

const WORKER = `export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === 'PUT') { await env.STORE.put(key, await request.text()); return new Response('stored'); }
    return new Response(String(await env.STORE.get(key)));
  },
};`;

/** The real wrangler 4 against Ledge: kv namespace, kv key and kv bulk with --remote, and a deploy bound to KV. */
describe('wrangler kv against Ledge', () => {
  let ledge: TestLedge;
  let project: string;
  let namespaceId: string;

  const wrangler = async (args: string[]) => {
    const result = await runWrangler(args, {
      apiUrl: ledge.apiUrl,
      cwd: project,
      env: { CLOUDFLARE_API_TOKEN: ledge.apiToken, CLOUDFLARE_ACCOUNT_ID: ledge.accountId },
      timeoutMs: 60_000,
    });
    return { ...result, output: result.stdout + result.stderr };
  };

  beforeAll(async () => {
    ledge = await startLedge();
    project = tempDir('ledge-wrangler-kv-');
  });
  afterAll(async () => ledge?.close());

  it('kv namespace create, list and rename', async () => {
    const created = await wrangler(['kv', 'namespace', 'create', 'shop-cache']);
    expect(created.code, created.output).toBe(0);
    namespaceId = /[0-9a-f]{32}/.exec(created.stdout)![0];
    const listed = await wrangler(['kv', 'namespace', 'list']);
    expect(listed.code, listed.output).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([{ id: namespaceId, title: 'shop-cache', supports_url_encoding: true }]);
    const renamed = await wrangler(['kv', 'namespace', 'rename', '--namespace-id', namespaceId, '--new-name', 'shop']);
    expect(renamed.code, renamed.output).toBe(0);
    expect(JSON.parse((await wrangler(['kv', 'namespace', 'list'])).stdout)[0].title).toBe('shop');
    // A second namespace of one title is refused with KV's code 10014, which wrangler words itself.
    const again = await wrangler(['kv', 'namespace', 'create', 'shop']);
    expect(again.code).not.toBe(0);
    expect(again.output).toContain('already exists');
  });

  it('kv key put, get, list and delete --remote', async () => {
    const ns = ['--namespace-id', namespaceId, '--remote'];
    const put = await wrangler(['kv', 'key', 'put', 'greeting', 'hello there', ...ns, '--metadata', '{"lang":"en"}']);
    expect(put.code, put.output).toBe(0);
    expect((await wrangler(['kv', 'key', 'put', 'other', 'x', ...ns, '--ttl', '3600'])).code).toBe(0);
    const got = await wrangler(['kv', 'key', 'get', 'greeting', ...ns, '--text']);
    expect(got.code, got.output).toBe(0);
    expect(got.stdout.trim()).toBe('hello there');
    const listed = await wrangler(['kv', 'key', 'list', ...ns]);
    expect(listed.code, listed.output).toBe(0);
    const keys = JSON.parse(listed.stdout) as { name: string; metadata?: unknown; expiration?: number }[];
    expect(keys.map((k) => k.name)).toEqual(['greeting', 'other']);
    expect(keys[0]!.metadata).toEqual({ lang: 'en' });
    expect(keys[1]!.expiration).toBeGreaterThan(Date.now() / 1000);
    const deleted = await wrangler(['kv', 'key', 'delete', 'other', ...ns]);
    expect(deleted.code, deleted.output).toBe(0);
    expect(JSON.parse((await wrangler(['kv', 'key', 'list', ...ns])).stdout)).toHaveLength(1);
    const missing = await wrangler(['kv', 'key', 'get', 'other', ...ns, '--text']);
    expect(missing.code).not.toBe(0);
    expect(missing.output).toContain('404');
  });

  it('kv bulk put and delete --remote', async () => {
    const file = join(project, 'bulk.json');
    writeFileSync(
      file,
      JSON.stringify([
        { key: 'b1', value: 'one' },
        { key: 'b2', value: Buffer.from('two').toString('base64'), base64: true, metadata: { n: 2 } },
      ]),
    );
    const ns = ['--namespace-id', namespaceId, '--remote'];
    const put = await wrangler(['kv', 'bulk', 'put', file, ...ns]);
    expect(put.code, put.output).toBe(0);
    expect((await wrangler(['kv', 'key', 'get', 'b2', ...ns, '--text'])).stdout.trim()).toBe('two');
    writeFileSync(file, JSON.stringify(['b1', 'b2']));
    const deleted = await wrangler(['kv', 'bulk', 'delete', file, ...ns, '--force']);
    expect(deleted.code, deleted.output).toBe(0);
    const names = (JSON.parse((await wrangler(['kv', 'key', 'list', ...ns])).stdout) as { name: string }[]).map(
      (k) => k.name,
    );
    expect(names).toEqual(['greeting']);
  });

  it('wrangler deploy with [[kv_namespaces]]: the function reads what wrangler wrote', async () => {
    writeFileSync(join(project, 'index.js'), WORKER);
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "kv-worker"\nmain = "index.js"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n\n[[kv_namespaces]]\nbinding = "STORE"\nid = "${namespaceId}"\n`,
    );
    const deployed = await wrangler(['deploy']);
    expect(deployed.code, deployed.output).toBe(0);
    const host = `kv-worker.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), host, '/greeting')).text).toBe('hello there');
    expect((await callFunction(functionsPort(ledge), host, '/new', { method: 'PUT', body: 'from fn' })).text).toBe(
      'stored',
    );
    const got = await wrangler(['kv', 'key', 'get', 'new', '--namespace-id', namespaceId, '--remote', '--text']);
    expect(got.stdout.trim()).toBe('from fn');
  });

  it('a deploy bound to a namespace the account does not have gets 10041', async () => {
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "kv-worker"\nmain = "index.js"\ncompatibility_date = "2025-01-01"\n\n[[kv_namespaces]]\nbinding = "STORE"\nid = "${'e'.repeat(32)}"\n`,
    );
    const deployed = await wrangler(['deploy']);
    expect(deployed.code).not.toBe(0);
    expect(deployed.output).toContain('10041');
  });

  it('kv namespace delete', async () => {
    const deleted = await wrangler(['kv', 'namespace', 'delete', '--namespace-id', namespaceId, '--skip-confirmation']);
    expect(deleted.code, deleted.output).toBe(0);
    expect(JSON.parse((await wrangler(['kv', 'namespace', 'list'])).stdout)).toEqual([]);
  });
});
