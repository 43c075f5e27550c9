import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { waitFor } from '../../helpers/wait.ts';
import {
  accountSubdomain,
  callFunction,
  enableWorkersDev,
  functionsPort,
  storeBrokenVersion,
  tenant,
  uploadScript,
} from '../helpers.ts';
import { FIRST_MIGRATION, routeObjects, uploadObjects } from './fixture.ts';

/** Durable Objects fail alone: a spinning object is stopped at its script's CPU limit; storage limits hold. */
describe('Durable Object limits and failure domains', () => {
  let ledge: TestLedge;
  let other: TestLedge;
  let objects: { port: number; host: string };
  let neighbour: string;

  beforeAll(async () => {
    // A SQLite-backed object may hold 256 KiB here (Cloudflare's 10 GB would take too long to fill).
    ledge = await startLedge({ env: { LEDGE_DURABLE_OBJECT_MAX_BYTES: String(256 * 1024) } });
    const uploaded = await uploadObjects(ledge, 'objects', {
      migrations: FIRST_MIGRATION,
      ...{ limits: { cpu_ms: 200 } },
    });
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
    objects = await routeObjects(ledge, 'objects');
    other = await tenant(ledge, 'Neighbour');
    const deployed = await uploadScript(other, 'neighbour', {
      modules: { 'index.js': 'export default { fetch() { return new Response("still here"); } };' },
    });
    expect(deployed.status).toBe(200);
    await enableWorkersDev(other, 'neighbour');
    neighbour = `neighbour.${await accountSubdomain(other)}.localhost`;
  });
  afterAll(async () => ledge?.close());

  const call = (path: string) => callFunction(objects.port, objects.host, path);

  it("stops an object that spins its CPU at the script's limit; the object and other accounts go on", async () => {
    expect((await call('/counter/steady')).text).toBe('1');
    const spun = await call('/spin/busy').catch((error: Error) => error);
    expect(spun instanceof Error ? spun.message : `${spun.status} ${spun.text}`).toBe('503 error code: 1102');
    expect((await callFunction(functionsPort(ledge), neighbour, '/')).text).toBe('still here');
    // The successor (once it has started: 1102 until then) serves the same objects, their storage intact.
    const next = await waitFor(async () => {
      const answer = await call('/counter/steady');
      return answer.status === 200 && answer.text;
    }, 'the successor process');
    expect(next).toBe('2');
  });

  it("refuses a value above Cloudflare's 128 KiB on a key-value backed class", async () => {
    expect((await call('/fill/small?bytes=131072')).text).toBe('stored');
    expect((await call('/fill/big?bytes=131073')).text).toMatch(/^refused: Values cannot be larger than 131072 bytes/);
  });

  it('refuses writes to a SQLite-backed object at its storage limit, which still reads; other objects go on', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 8 && !outcomes.at(-1)?.startsWith('refused'); i++)
      outcomes.push((await call('/room/full/fill?bytes=65536')).text);
    expect(outcomes.length).toBeGreaterThan(2);
    expect(outcomes.at(-1)).toBe('refused: database or disk is full: SQLITE_FULL');
    expect((JSON.parse((await call('/room/full/messages')).text) as string[]).length).toBe(outcomes.length - 1);
    expect((await call('/room/other/fill?bytes=65536')).text).toBe('stored');
  });

  it("refuses a key above Cloudflare's 2 KiB", async () => {
    expect((await call('/fill/small?bytes=2048&key')).text).toBe('stored');
    expect((await call('/fill/big?bytes=2049&key')).text).toMatch(/^refused: .*2048/);
  });

  it('keeps serving the previous version, on the same slot, when a new one fails to start in place', async () => {
    expect((await call('/counter/kept')).text).toBe('1');
    const { workers, runtime } = ledge.server.platform.functions;
    await storeBrokenVersion(workers.store, ledge.accountId, 'objects');
    const report = await runtime.reload();
    expect(report.failed.get(`${ledge.accountId}/objects`)).toContain('stored broken version of objects');
    expect((await call('/counter/kept')).text).toBe('2');
    expect(runtime.status(ledge.accountId).get('objects')?.state).toBe('running');
  });
});
