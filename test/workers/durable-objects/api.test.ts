import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { callFunction } from '../helpers.ts';
import { FIRST_MIGRATION, routeObjects, uploadObjects } from './fixture.ts';

/** Durable Objects through the upload API: migrations, key-value and SQL storage, ids, RPC. */
describe('Durable Objects', () => {
  let ledge: TestLedge;
  let target: { port: number; host: string };
  const call = (path: string) => callFunction(target.port, target.host, path);

  beforeAll(async () => {
    ledge = await startLedge();
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
});
