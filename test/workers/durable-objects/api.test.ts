import Cloudflare from 'cloudflare';
import { Agent } from 'node:http';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { waitFor } from '../../helpers/wait.ts';
import { api, callFunction } from '../helpers.ts';
import { FIRST_MIGRATION, OBJECTS_WORKER, routeObjects, uploadObjects } from './fixture.ts';

/** Durable Objects through the upload API: key-value and SQL storage, ids, RPC, alarms, WebSockets, the API. */
describe('Durable Objects', () => {
  let ledge: TestLedge;
  let target: { port: number; host: string };
  const call = (path: string) => callFunction(target.port, target.host, path);

  beforeAll(async () => {
    // Two processes on the functions port: an object must still have exactly one live instance.
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    const uploaded = await uploadObjects(ledge, 'objects', { migrations: FIRST_MIGRATION });
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
    target = await routeObjects(ledge, 'objects');
  });
  afterAll(async () => ledge?.close());

  it('counts per object name through RPC and fetch', async () => {
    expect((await call('/counter/a')).text).toBe('1');
    expect((await call('/counter/a')).text).toBe('2');
    expect((await call('/counter-fetch/a')).text).toBe('3');
    expect((await call('/counter/b')).text).toBe('1');
  });

  it('runs one live instance of an object, whichever functions process takes the connection', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 12; i++)
      seen.push((await callFunction(target.port, target.host, '/instance/one', { agent: new Agent() })).text);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
  });

  it('serves every request while the Worker is redeployed in place, the counter never skipping or repeating', async () => {
    const seen: string[] = [];
    let deploying = true;
    const redeploy = uploadObjects(ledge, 'objects', {}, `${OBJECTS_WORKER}\n// redeployed\n`).finally(() => {
      deploying = false;
    });
    while (deploying || seen.length < 5) {
      // The Worker is the server's only one, so it serves the port itself: its old process closes its keep-alive
      // connections as it stops, and a request that crosses that close, on a reused socket before any answer, is
      // one clients retry (RFC 9112 9.3.1). Were it run twice, the counter would skip.
      const answer = await callFunction(target.port, target.host, '/counter/during').catch((error: unknown) => {
        if ((error as { reusedSocket?: boolean }).reusedSocket) return undefined;
        throw error;
      });
      if (!answer) continue;
      expect(answer.status, answer.text).toBe(200);
      seen.push(answer.text);
    }
    expect((await redeploy).status).toBe(200);
    expect(seen).toEqual(seen.map((_, i) => String(i + 1)));
  });

  it('keeps rows in SQLite storage', async () => {
    expect((await call('/room/r1/add?text=hello')).text).toBe('1');
    expect((await call('/room/r1/add?text=world')).text).toBe('2');
    expect(JSON.parse((await call('/room/r1/messages')).text)).toEqual(['hello', 'world']);
  });

  it('derives ids by name, makes unique ones and parses them back', async () => {
    const ids = JSON.parse((await call('/ids/a')).text) as { named: string; unique: string; same: boolean };
    expect(ids.named).toMatch(/^[0-9a-f]{64}$/);
    expect(ids.unique).toMatch(/^[0-9a-f]{64}$/);
    expect(ids.same).toBe(true);
    expect(JSON.parse((await call('/unique/x')).text)).toEqual({ first: 1, second: 2 });
  });

  it('runs an alarm the object set, which writes to its storage', async () => {
    expect((await call('/room/alarmed/alarm?text=rang')).text).toBe('scheduled');
    await waitFor(async () => JSON.parse((await call('/room/alarmed/messages')).text).includes('rang'), 'the alarm');
  });

  it('relays WebSocket messages between two clients of a hibernatable object, through the front', async () => {
    const open = () =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${target.port}/room/chat/ws`, { headers: { host: target.host } });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
    const [alice, bob] = [await open(), await open()];
    const heard = new Promise<string>((resolve) => bob.once('message', (data) => resolve(String(data))));
    alice.send('hi bob');
    expect(await heard).toBe('hi bob');
    const closed = new Promise<void>((resolve) => alice.once('close', () => resolve()));
    alice.close(4000);
    await closed;
    bob.close();
    expect(JSON.parse((await call('/room/chat/messages')).text)).toEqual(['hi bob']);
  });

  it('relays a hibernatable WebSocket through a Workers route on the traffic port', async () => {
    const zone = await api(ledge, 'POST', '/zones', { name: 'objects.example', account: { id: ledge.accountId } });
    const route = await api(ledge, 'POST', `/zones/${zone.body.result.id}/workers/routes`, {
      pattern: 'chat.objects.example/*',
      script: 'objects',
    });
    expect(route.status, JSON.stringify(route.body.errors)).toBe(200);
    const traffic = ledge.server.platform.traffic.port!;
    const open = () =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${traffic}/room/routed/ws`, {
          headers: { host: 'chat.objects.example' },
        });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
    // The route may take a moment to reach the traffic port's table and the runtime's.
    const alice = await waitFor(() => open().catch(() => undefined), 'the route');
    const bob = await open();
    const heard = new Promise<string>((resolve) => bob.once('message', (data) => resolve(String(data))));
    alice.send('via the route');
    expect(await heard).toBe('via the route');
    alice.close();
    bob.close();
  });

  it('lists namespaces and their objects as the SDK types them', async () => {
    const sdk = new Cloudflare({ apiToken: ledge.apiToken, baseURL: ledge.apiUrl });
    const namespaces = [];
    for await (const namespace of sdk.durableObjects.namespaces.list({ account_id: ledge.accountId }))
      namespaces.push(namespace);
    expect(namespaces.map((n) => [n.class, n.script, n.name, n.use_sqlite]).sort()).toEqual([
      ['Counter', 'objects', 'objects_Counter', false],
      ['Room', 'objects', 'objects_Room', true],
    ]);
    const counter = namespaces.find((n) => n.class === 'Counter')!;
    const objects = [];
    for await (const object of sdk.durableObjects.namespaces.objects.list(counter.id!, {
      account_id: ledge.accountId,
      limit: 10,
    }))
      objects.push(object);
    const named = JSON.parse((await call('/ids/a')).text) as { named: string };
    expect(objects.map((o) => o.id)).toContain(named.named);
    expect(objects.every((o) => o.hasStoredData)).toBe(true);
    const missing = await api(
      ledge,
      'GET',
      `/accounts/${ledge.accountId}/workers/durable_objects/namespaces/${'0'.repeat(32)}/objects`,
    );
    expect(missing.status).toBe(404);
  });
});
