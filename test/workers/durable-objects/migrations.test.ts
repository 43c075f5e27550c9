import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { api, callFunction, uploadScript } from '../helpers.ts';
import { FIRST_MIGRATION, OBJECTS_WORKER, routeObjects, uploadObjects } from './fixture.ts';

const errorOf = (body: { errors: { code: number; message: string }[] }) => body.errors[0];

/** Migrations as Cloudflare applies them: tags, created, renamed, deleted and transferred classes, with its errors. */
describe('Durable Object migrations', () => {
  let ledge: TestLedge;
  let target: { port: number; host: string };
  const call = (path: string) => callFunction(target.port, target.host, path);
  const namespaces = async () =>
    (await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/durable_objects/namespaces?per_page=100`)).body
      .result as { id: string; class: string; script: string }[];
  const objectsDir = () => join(ledge.dataDir, 'durable-objects', ledge.accountId);

  beforeAll(async () => {
    ledge = await startLedge();
  });
  afterAll(async () => ledge?.close());

  it('refuses a binding to a class no migration created (10061)', async () => {
    const refused = await uploadObjects(ledge, 'objects');
    expect(refused.status).toBe(400);
    expect(errorOf(refused.body)).toMatchObject({ code: 10061 });
    expect(errorOf(refused.body)!.message).toContain("class 'Counter'");
  });

  it('refuses an old_tag the script does not have (10079)', async () => {
    const refused = await uploadObjects(ledge, 'objects', { migrations: { ...FIRST_MIGRATION, old_tag: 'v0' } });
    expect(refused.status).toBe(400);
    expect(errorOf(refused.body)).toMatchObject({ code: 10079 });
  });

  it('refuses a migration creating a class the script does not export (10070)', async () => {
    const refused = await uploadObjects(ledge, 'objects', {
      bindings: [],
      migrations: { new_tag: 'v1', steps: [{ new_classes: ['Missing'] }] },
    });
    expect(refused.status).toBe(400);
    expect(errorOf(refused.body), JSON.stringify(refused.body.errors)).toMatchObject({ code: 10070 });
    expect(errorOf(refused.body)!.message).toContain("'Missing'");
  });

  it('applies the first migration, then refuses its replay: the tag is the current one (10079)', async () => {
    const deployed = await uploadObjects(ledge, 'objects', { migrations: FIRST_MIGRATION });
    expect(deployed.status, JSON.stringify(deployed.body.errors)).toBe(200);
    target = await routeObjects(ledge, 'objects');
    expect((await call('/counter/a')).text).toBe('1');
    const replay = await uploadObjects(ledge, 'objects', { migrations: FIRST_MIGRATION });
    expect(replay.status).toBe(400);
    expect(errorOf(replay.body)).toMatchObject({
      code: 10079,
      message: "Migration tag precondition failed; current tag is 'v1'",
    });
    const service = await api(ledge, 'GET', `/accounts/${ledge.accountId}/workers/services/objects`);
    expect(service.body.result.default_environment.script.migration_tag).toBe('v1');
  });

  it('refuses creating a class that exists (10074) and a migration in a version upload (10211)', async () => {
    const again = await uploadObjects(ledge, 'objects', {
      migrations: { old_tag: 'v1', new_tag: 'v2', steps: [{ new_classes: ['Counter'] }] },
    });
    expect(again.status).toBe(400);
    expect(errorOf(again.body)).toMatchObject({ code: 10074 });
    const version = await uploadScript(ledge, 'objects', {
      modules: { 'index.js': OBJECTS_WORKER },
      method: 'POST',
      path: `/accounts/${ledge.accountId}/workers/scripts/objects/versions`,
      metadata: { migrations: { old_tag: 'v1', new_tag: 'v2', steps: [] } },
    });
    expect(version.status).toBe(400);
    expect(errorOf(version.body)).toMatchObject({ code: 10211 });
  });

  it('lets one of two uploads carrying the same old_tag at once apply its migration; the other gets 10079', async () => {
    const extra = (name: string) => `${OBJECTS_WORKER}\nexport class ${name} extends DurableObject {}\n`;
    const [a, b] = await Promise.all(
      ['ExtraA', 'ExtraB'].map((name) =>
        uploadObjects(
          ledge,
          'objects',
          { migrations: { old_tag: 'v1', new_tag: `v1-${name}`, steps: [{ new_sqlite_classes: [name] }] } },
          extra(name),
        ),
      ),
    );
    expect([a!.status, b!.status].sort()).toEqual([200, 400]);
    const loser = a!.status === 400 ? a! : b!;
    expect(errorOf(loser.body)).toMatchObject({ code: 10079 });
    const winner = a!.status === 200 ? 'ExtraA' : 'ExtraB';
    expect((await namespaces()).map((n) => n.class).sort()).toEqual(['Counter', 'Room', winner].sort());
    // Back to v1's classes for what follows: the winner's class goes again.
    const back = await uploadObjects(ledge, 'objects', {
      migrations: { old_tag: `v1-${winner}`, new_tag: 'v1', steps: [{ deleted_classes: [winner] }] },
    });
    expect(back.status, JSON.stringify(back.body.errors)).toBe(200);
  });

  it('keeps the objects of a renamed class', async () => {
    const renamed = OBJECTS_WORKER.replace('export class Counter', 'export class Tally');
    const deployed = await uploadObjects(
      ledge,
      'objects',
      {
        bindings: [
          { type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Tally' },
          { type: 'durable_object_namespace', name: 'ROOM', class_name: 'Room' },
        ],
        migrations: { old_tag: 'v1', new_tag: 'v2', steps: [{ renamed_classes: [{ from: 'Counter', to: 'Tally' }] }] },
      },
      renamed,
    );
    expect(deployed.status, JSON.stringify(deployed.body.errors)).toBe(200);
    expect((await call('/counter/a')).text).toBe('2');
    expect((await namespaces()).map((n) => n.class).sort()).toEqual(['Room', 'Tally']);
  });

  it("deletes a deleted class's objects, and refuses a binding to it", async () => {
    expect((await call('/room/r/add?text=kept-until-deleted')).text).toBe('1');
    const room = (await namespaces()).find((n) => n.class === 'Room')!;
    expect(readdirSync(join(objectsDir(), room.id)).some((f) => f.endsWith('.sqlite'))).toBe(true);
    const source = OBJECTS_WORKER.replace('export class Counter', 'export class Tally');
    const stillBound = await uploadObjects(
      ledge,
      'objects',
      { migrations: { old_tag: 'v2', new_tag: 'v3', steps: [{ deleted_classes: ['Room'] }] } },
      source,
    );
    expect(stillBound.status).toBe(400);
    expect(errorOf(stillBound.body)).toMatchObject({ code: 10061 });
    const deleted = await uploadObjects(
      ledge,
      'objects',
      {
        bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Tally' }],
        migrations: { old_tag: 'v2', new_tag: 'v3', steps: [{ deleted_classes: ['Room'] }] },
      },
      source,
    );
    expect(deleted.status, JSON.stringify(deleted.body.errors)).toBe(200);
    expect(existsSync(join(objectsDir(), room.id))).toBe(false);
    expect((await namespaces()).map((n) => n.class)).toEqual(['Tally']);
    expect((await call('/counter/a')).text).toBe('3');
  });

  it("transfers a class with its objects to another script of the account, and deletes a deleted script's objects", async () => {
    const source = OBJECTS_WORKER.replace('export class Counter', 'export class Moved');
    const transfer = {
      bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Moved' }],
      migrations: {
        new_tag: 'r1',
        steps: [{ transferred_classes: [{ from: 'Tally', from_script: 'objects', to: 'Moved' }] }],
      },
    };
    const stillBound = await uploadObjects(ledge, 'receiver', transfer, source);
    expect(stillBound.status).toBe(400);
    expect(errorOf(stillBound.body)).toMatchObject({ code: 10074 });
    expect(errorOf(stillBound.body)!.message).toContain('binding COUNTER still refers to it');
    // The old script lets go of the class (it keeps its tag and hosts nothing), then the receiver takes it.
    const tally = OBJECTS_WORKER.replace('export class Counter', 'export class Tally');
    const released = await uploadObjects(ledge, 'objects', { bindings: [] }, tally);
    expect(released.status, JSON.stringify(released.body.errors)).toBe(200);
    const transferred = await uploadObjects(
      ledge,
      'receiver',
      {
        bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Moved' }],
        migrations: {
          new_tag: 'r1',
          steps: [{ transferred_classes: [{ from: 'Tally', from_script: 'objects', to: 'Moved' }] }],
        },
      },
      source,
    );
    expect(transferred.status, JSON.stringify(transferred.body.errors)).toBe(200);
    const receiver = await routeObjects(ledge, 'receiver');
    expect((await callFunction(receiver.port, receiver.host, '/counter/a')).text).toBe('4');
    const moved = (await namespaces()).find((n) => n.class === 'Moved')!;
    expect(moved.script).toBe('receiver');
    const removed = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/receiver`);
    expect(removed.status).toBe(200);
    expect(existsSync(join(objectsDir(), moved.id))).toBe(false);
    expect(await namespaces()).toEqual([]);
  });
});
