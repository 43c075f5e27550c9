import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { callFunction, tenant } from '../helpers.ts';
import { FIRST_MIGRATION, OBJECT_BINDINGS, routeObjects, uploadObjects } from './fixture.ts';

/** The same bindings, to the classes the Worker `host` of the account hosts. */
const REMOTE_BINDINGS = OBJECT_BINDINGS.map((b) => ({ ...b, script_name: 'host' }));

/**
 * `script_name` bindings: a Worker reaches the Durable Objects of another Worker of its account, which runs in
 * a process of its own; both see the same objects (same ids, same storage, one live instance).
 */
describe('Durable Object bindings to another Worker of the account', () => {
  let ledge: TestLedge;
  let host: { port: number; host: string };
  let caller: { port: number; host: string };

  beforeAll(async () => {
    ledge = await startLedge();
    const hosted = await uploadObjects(ledge, 'host', { migrations: FIRST_MIGRATION });
    expect(hosted.status, JSON.stringify(hosted.body.errors)).toBe(200);
    host = await routeObjects(ledge, 'host');
    // The caller's module exports the same classes, but no migration made them Durable Objects of its own.
    const calling = await uploadObjects(ledge, 'caller', { bindings: REMOTE_BINDINGS });
    expect(calling.status, JSON.stringify(calling.body.errors)).toBe(200);
    caller = await routeObjects(ledge, 'caller');
  });
  afterAll(async () => ledge?.close());

  const onHost = (path: string) => callFunction(host.port, host.host, path);
  const onCaller = (path: string) => callFunction(caller.port, caller.host, path);

  it('counts on one object from both Workers, through RPC and fetch', async () => {
    expect((await onCaller('/counter/shared')).text).toBe('1');
    expect((await onHost('/counter/shared')).text).toBe('2');
    expect((await onCaller('/counter-fetch/shared')).text).toBe('3');
    expect((await onCaller('/unique/x')).text).toBe(JSON.stringify({ first: 1, second: 2 }));
  });

  it("derives the host's ids, and keeps rows in the host's SQLite objects", async () => {
    const fromCaller = JSON.parse((await onCaller('/ids/room-1')).text) as { named: string; same: boolean };
    const fromHost = JSON.parse((await onHost('/ids/room-1')).text) as { named: string };
    expect(fromCaller.named).toBe(fromHost.named);
    expect(fromCaller.same).toBe(true);
    expect((await onCaller('/room/lobby/add?text=from%20caller')).text).toBe('1');
    expect(JSON.parse((await onHost('/room/lobby/messages')).text)).toEqual(['from caller']);
  });

  it("relays a hibernatable WebSocket of the host's object opened through the caller", async () => {
    const open = (target: { port: number; host: string }) =>
      new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${target.port}/room/chat/ws`, { headers: { host: target.host } });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      });
    const [alice, bob] = [await open(caller), await open(host)];
    const heard = new Promise<string>((resolve) => bob.once('message', (data) => resolve(String(data))));
    alice.send('across scripts');
    expect(await heard).toBe('across scripts');
    alice.close();
    bob.close();
  });

  it("keeps the gates' namespaces out of the Worker's env and its objects' env", async () => {
    const keys = { handler: ['COUNTER', 'ROOM'], object: ['COUNTER', 'ROOM'] };
    expect(JSON.parse((await onHost('/env/e')).text)).toEqual(keys);
    expect(JSON.parse((await onCaller('/env/e')).text)).toEqual(keys);
  });

  it('refuses a binding to a class the Worker does not host, or to a Worker the account does not have (10061)', async () => {
    const missingClass = await uploadObjects(ledge, 'caller-2', {
      bindings: [{ type: 'durable_object_namespace', name: 'X', class_name: 'Nope', script_name: 'host' }],
    });
    expect(missingClass.status).toBe(400);
    expect(missingClass.body.errors[0]).toMatchObject({ code: 10061 });
    expect(missingClass.body.errors[0]!.message).toContain("class 'Nope' of the Worker 'host'");
    const missingScript = await uploadObjects(ledge, 'caller-2', {
      bindings: [{ type: 'durable_object_namespace', name: 'X', class_name: 'Counter', script_name: 'nowhere' }],
    });
    expect(missingScript.status).toBe(400);
    expect(missingScript.body.errors[0]!.message).toContain("the Worker 'nowhere' does not exist on this account");
  });

  it("refuses a binding to another account's Worker, even of the same name and class", async () => {
    const other = await tenant(ledge, 'Other');
    const attempt = await uploadObjects(other, 'thief', { bindings: REMOTE_BINDINGS });
    expect(attempt.status).toBe(400);
    expect(attempt.body.errors[0]).toMatchObject({ code: 10061 });
    expect(attempt.body.errors[0]!.message).toContain("the Worker 'host' does not exist on this account");
  });
});
