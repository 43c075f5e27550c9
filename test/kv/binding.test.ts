import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startLedge, tempDir, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  uploadScript,
} from '../workers/helpers.ts';

/** A function that drives its KV binding as a request says (`/<op>?key=...`). */
const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const key = url.searchParams.get('key');
    const op = url.pathname.slice(1);
    const json = (v) => Response.json(v);
    switch (op) {
      case 'put': {
        const options = {};
        if (url.searchParams.has('ttl')) options.expirationTtl = Number(url.searchParams.get('ttl'));
        if (url.searchParams.has('meta')) options.metadata = JSON.parse(url.searchParams.get('meta'));
        await env.KV.put(key, await request.text(), options);
        return new Response('ok');
      }
      case 'text': return new Response(String(await env.KV.get(key)));
      case 'cached': return new Response(String(await env.KV.get(key, { cacheTtl: 60 })));
      case 'json': return json(await env.KV.get(key, 'json'));
      case 'bytes': return new Response(String((await env.KV.get(key, 'arrayBuffer')).byteLength));
      case 'stream': return new Response(await env.KV.get(key, 'stream'));
      case 'meta': return json(await env.KV.getWithMetadata(key));
      case 'bulk': return json(Object.fromEntries(await env.KV.get(url.searchParams.getAll('k'))));
      case 'delete': await env.KV.delete(key); return new Response('deleted');
      case 'list': return json(await env.KV.list({ prefix: url.searchParams.get('prefix') ?? undefined, limit: Number(url.searchParams.get('limit') ?? 1000), cursor: url.searchParams.get('cursor') ?? undefined }));
      case 'big': { await env.KV.put(key, 'z'.repeat(100000)); return new Response(String((await env.KV.get(key)).length)); }
      case 'badkey': try { await env.KV.get('x'.repeat(600)); return new Response('no error'); } catch (e) { return new Response(e.message, { status: 400 }); }
    }
    return new Response('unknown op', { status: 404 });
  },
};`;

describe('a function bound to a KV namespace', () => {
  let ledge: TestLedge;
  let host: string;
  let namespaceId: string;
  const call = (path: string, init: { method?: string; body?: string } = {}) =>
    callFunction(functionsPort(ledge), host, path, init);

  beforeAll(async () => {
    ledge = await startLedge();
    const created = await api(ledge, 'POST', `/accounts/${ledge.accountId}/storage/kv/namespaces`, { title: 'app' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    namespaceId = created.body.result.id as string;
    const upload = await uploadScript(ledge, 'kv-app', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: namespaceId }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'kv-app')).status).toBe(200);
    host = `kv-app.${await accountSubdomain(ledge)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  it('puts and gets as text, json, arrayBuffer and stream, with cacheTtl', async () => {
    expect((await call('/put?key=doc', { method: 'PUT', body: '{"a":1}' })).text).toBe('ok');
    expect((await call('/text?key=doc')).text).toBe('{"a":1}');
    expect((await call('/cached?key=doc')).text).toBe('{"a":1}');
    expect(JSON.parse((await call('/json?key=doc')).text)).toEqual({ a: 1 });
    expect((await call('/bytes?key=doc')).text).toBe('7');
    expect((await call('/stream?key=doc')).text).toBe('{"a":1}');
    expect((await call('/text?key=missing')).text).toBe('null');
    expect((await call('/big?key=large')).text).toBe('100000');
  });

  it('keeps metadata and expiration, gets several keys at once, lists and deletes', async () => {
    await call(`/put?key=m1&ttl=3600&meta=${encodeURIComponent('{"owner":"ann"}')}`, { method: 'PUT', body: 'one' });
    await call('/put?key=m2', { method: 'PUT', body: 'two' });
    expect(JSON.parse((await call('/meta?key=m1')).text)).toMatchObject({ value: 'one', metadata: { owner: 'ann' } });
    expect(JSON.parse((await call('/bulk?k=m1&k=m2&k=nope')).text)).toEqual({ m1: 'one', m2: 'two', nope: null });
    const listed = JSON.parse((await call('/list?prefix=m')).text) as {
      keys: { name: string; expiration?: number; metadata?: unknown }[];
      list_complete: boolean;
    };
    expect(listed.list_complete).toBe(true);
    expect(listed.keys.map((k) => k.name)).toEqual(['m1', 'm2']);
    expect(listed.keys[0]!.metadata).toEqual({ owner: 'ann' });
    expect(listed.keys[0]!.expiration).toBeGreaterThan(Date.now() / 1000 + 3000);
    // The API sees what the function wrote, at once (one engine process per account).
    const value = await fetch(
      `${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces/${namespaceId}/values/m2`,
      { headers: ledge.tokenHeaders },
    );
    expect(await value.text()).toBe('two');
    expect((await call('/delete?key=m2')).text).toBe('deleted');
    expect((await call('/text?key=m2')).text).toBe('null');
  });

  it('pages a list with a cursor', async () => {
    for (let i = 0; i < 12; i++)
      await call(`/put?key=page-${String(i).padStart(2, '0')}`, { method: 'PUT', body: 'v' });
    const first = JSON.parse((await call('/list?prefix=page-&limit=10')).text) as { keys: unknown[]; cursor: string };
    expect(first.keys).toHaveLength(10);
    const second = JSON.parse(
      (await call(`/list?prefix=page-&limit=10&cursor=${encodeURIComponent(first.cursor)}`)).text,
    ) as { keys: unknown[]; list_complete: boolean };
    expect(second.keys).toHaveLength(2);
    expect(second.list_complete).toBe(true);
  });

  it("refuses a key over 512 bytes in the function with the binding's error", async () => {
    const answer = await call('/badkey');
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('512');
  });

  it('`ledge deploy` reads [[kv_namespaces]] from wrangler.toml', async () => {
    const project = tempDir('ledge-kv-deploy-');
    writeFileSync(join(project, 'index.js'), WORKER);
    writeFileSync(
      join(project, 'wrangler.toml'),
      `name = "kv-cli"\nmain = "index.js"\ncompatibility_date = "2025-01-01"\nworkers_dev = true\n\n[[kv_namespaces]]\nbinding = "KV"\nid = "${namespaceId}"\n`,
    );
    const deployed = await runCli(['deploy'], { env: cliEnv(ledge), cwd: project });
    expect(deployed.code, deployed.stderr + deployed.stdout).toBe(0);
    const cliHost = `kv-cli.${await accountSubdomain(ledge)}.localhost`;
    expect((await callFunction(functionsPort(ledge), cliHost, '/text?key=doc')).text).toBe('{"a":1}');
  });

  it("a write is seen at once by another script's process and by the API (the documented bound)", async () => {
    const upload = await uploadScript(ledge, 'kv-reader', {
      modules: { 'index.js': WORKER },
      metadata: { bindings: [{ type: 'kv_namespace', name: 'KV', namespace_id: namespaceId }] },
    });
    expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
    expect((await enableWorkersDev(ledge, 'kv-reader')).status).toBe(200);
    const reader = `kv-reader.${await accountSubdomain(ledge)}.localhost`;
    const valueUrl = `${ledge.apiUrl}/accounts/${ledge.accountId}/storage/kv/namespaces/${namespaceId}/values/seen`;
    for (let round = 0; round < 10; round++) {
      // Written by one script, read right after the write was acknowledged by the other script and the API.
      await call('/put?key=seen', { method: 'PUT', body: `fn-${round}` });
      expect((await callFunction(functionsPort(ledge), reader, '/text?key=seen')).text).toBe(`fn-${round}`);
      expect(await (await fetch(valueUrl, { headers: ledge.tokenHeaders })).text()).toBe(`fn-${round}`);
      // Written through the API, read right after by a function, with the longest cacheTtl a reader may ask.
      await fetch(valueUrl, { method: 'PUT', headers: ledge.tokenHeaders, body: `api-${round}` });
      expect((await callFunction(functionsPort(ledge), reader, '/cached?key=seen')).text).toBe(`api-${round}`);
    }
  });
});
