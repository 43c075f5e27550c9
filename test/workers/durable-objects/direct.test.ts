import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../../helpers/ledge.ts';
import { waitFor } from '../../helpers/wait.ts';
import { api, callFunction, enableWorkersDev, storeBrokenVersion, uploadScript } from '../helpers.ts';
import { FIRST_MIGRATION, OBJECTS_WORKER, routeObjects, uploadObjects } from './fixture.ts';

/**
 * The server's only script hosting Durable Objects runs on the functions port itself, with no front process
 * between: one process on every socket of the port, and never two at once, whatever replaces it (a redeploy, a
 * crash, a limit kill, a second script moving it to a backend and back). Each object has one live instance, so
 * increments sent all along stay one sequence: two instances would hand out the same numbers.
 */
describe('a sole Durable Object Worker on the functions port', () => {
  let ledge: TestLedge;
  let objects: { port: number; host: string };
  /** A new connection per request: one queued while processes change must be served, never reset. */
  const fresh = new Agent({ keepAlive: false });
  const runtime = () => ledge.server.platform.functions.runtime;
  const call = (path: string) => callFunction(objects.port, objects.host, path, { agent: fresh });
  let version = 0;
  const redeploy = async () => {
    const source = `${OBJECTS_WORKER}\n// version ${++version}\n`;
    const uploaded = await uploadObjects(ledge, 'objects', { limits: { cpu_ms: 200 } }, source);
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
  };

  /** Increments one counter from `loops` parallel callers until `during` settles; every answer, in order. */
  async function incrementsDuring(name: string, during: () => Promise<void>, loops = 3): Promise<number[]> {
    let done = false;
    const seen: number[] = [];
    const failures: string[] = [];
    const caller = async () => {
      while (!done) {
        const answer = await call(`/counter/${name}`).catch((error: Error) => error);
        if (answer instanceof Error || answer.status !== 200)
          failures.push(answer instanceof Error ? answer.message : `${answer.status} ${answer.text}`);
        else seen.push(Number(answer.text));
      }
    };
    const callers = Array.from({ length: loops }, caller);
    try {
      await during();
    } finally {
      done = true;
      await Promise.all(callers);
    }
    expect(failures).toEqual([]);
    return seen;
  }

  /** The numbers handed out are 1..n exactly once each: one instance, no increment lost or repeated. */
  function expectOneSequence(seen: number[], before = 0) {
    const sorted = [...seen].sort((a, b) => a - b);
    expect(sorted).toEqual(Array.from({ length: seen.length }, (_, index) => before + index + 1));
  }

  /**
   * Holds a call in the object's live instance while `replace` runs, asking the object who it is all along (a new
   * connection each time): another instance may answer only after the held call has, so the two never overlap.
   */
  async function expectNoOverlap(name: string, replace: () => Promise<void>) {
    const whoami = async () => {
      const answer = await call(`/whoami/${name}`).catch(() => undefined);
      return answer?.status === 200 ? (JSON.parse(answer.text) as { self: string; holding: number }) : undefined;
    };
    let heldAt = Infinity;
    const held = call(`/hold/${name}?ms=1500`).then((answer) => {
      heldAt = performance.now();
      return answer.text;
    });
    await waitFor(async () => ((await whoami())?.holding ?? 0) > 0, 'the held call to reach the object');
    const answers: { self: string; at: number }[] = [];
    let asking = true;
    const asker = (async () => {
      while (asking) {
        const who = await whoami();
        if (who) answers.push({ self: who.self, at: performance.now() });
      }
    })();
    try {
      await replace();
      const holder = await held;
      await waitFor(() => answers.some((answer) => answer.self !== holder), 'an answer from the next instance');
      const overlapping = answers.filter((answer) => answer.self !== holder && answer.at < heldAt);
      expect(overlapping.length, 'answers from another instance while the held call ran').toBe(0);
    } finally {
      asking = false;
      await asker;
    }
  }

  beforeAll(async () => {
    // Two sockets on the port: the one process must accept on both.
    ledge = await startLedge({ flags: { functionsProcesses: 2 } });
    const uploaded = await uploadObjects(ledge, 'objects', { migrations: FIRST_MIGRATION, limits: { cpu_ms: 200 } });
    expect(uploaded.status, JSON.stringify(uploaded.body.errors)).toBe(200);
    objects = await routeObjects(ledge, 'objects');
  });
  afterAll(async () => {
    fresh.destroy();
    await ledge?.close();
  });

  it('runs in one process that is the whole port: no front, every connection served', async () => {
    expect(runtime().pids).toHaveLength(1);
    expect(runtime().scriptPids(ledge.accountId, 'objects')).toEqual(runtime().pids);
    const answers = await Promise.all(Array.from({ length: 24 }, () => call('/counter/spread')));
    expectOneSequence(answers.map((answer) => Number(answer.text)));
  });

  it('keeps one instance of each object through redeploys, and loses no request queued meanwhile', async () => {
    const [before] = runtime().pids;
    const seen = await incrementsDuring('redeployed', async () => {
      await redeploy();
      await redeploy();
    });
    expect(seen.length).toBeGreaterThan(0);
    expectOneSequence(seen);
    expect(runtime().pids).toHaveLength(1);
    expect(runtime().pids).not.toContain(before);
  });

  it('starts the next version only once the previous one has finished its calls', async () => {
    await expectNoOverlap('redeploy-held', redeploy);
  });

  it('starts a backend for it only once its process on the port has finished its calls', async () => {
    await expectNoOverlap('moved-held', async () => {
      const other = await uploadScript(ledge, 'other', {
        modules: { 'index.js': 'export default { fetch() { return new Response("other"); } };' },
      });
      expect(other.status).toBe(200);
      await enableWorkersDev(ledge, 'other');
    });
    // And back to the port once the other script is gone.
    await expectNoOverlap('moved-held', async () => {
      const deleted = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/other`);
      expect(deleted.status).toBe(200);
    });
    expect(runtime().scriptPids(ledge.accountId, 'objects')).toEqual(runtime().pids);
  });

  it('starts again after a kill -9, its objects intact', async () => {
    const before = Number((await call('/counter/killed')).text);
    const [pid] = runtime().pids;
    process.kill(pid!, 'SIGKILL');
    const next = await waitFor(async () => {
      const answer = await call('/counter/killed').catch(() => undefined);
      return answer?.status === 200 && Number(answer.text);
    }, 'the successor process');
    expect(next).toBe(before + 1);
    expect(runtime().pids).toHaveLength(1);
  });

  it('stops an object that spins its CPU; the successor serves the same objects', async () => {
    const before = Number((await call('/counter/spun')).text);
    const spun = await call('/spin/busy').catch((error: Error) => error);
    // With no front to answer for it, the connection of the runaway request closes unanswered.
    expect(spun instanceof Error ? 'closed' : spun.status).not.toBe(200);
    const next = await waitFor(async () => {
      const answer = await call('/counter/spun').catch(() => undefined);
      return answer?.status === 200 && Number(answer.text);
    }, 'the successor process');
    expect(next).toBe(before + 1);
  });

  it('moves to a backend of its own when a second script is deployed, and back, one instance all along', async () => {
    const direct = runtime().pids;
    const seen = await incrementsDuring('moved', async () => {
      const other = await uploadScript(ledge, 'other', {
        modules: { 'index.js': 'export default { fetch() { return new Response("other"); } };' },
      });
      expect(other.status).toBe(200);
      await enableWorkersDev(ledge, 'other');
      // Front mode: the objects' process is no longer the port's.
      expect(runtime().scriptPids(ledge.accountId, 'objects')).not.toEqual(runtime().pids);
      const deleted = await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/other`);
      expect(deleted.status).toBe(200);
    });
    expectOneSequence(seen);
    expect(runtime().pids).toHaveLength(1);
    expect(runtime().pids).not.toEqual(direct);
    expect(runtime().scriptPids(ledge.accountId, 'objects')).toEqual(runtime().pids);
  });

  it('keeps serving the previous version when a new one fails to start', async () => {
    const before = Number((await call('/counter/kept')).text);
    await storeBrokenVersion(ledge.server.platform.functions.workers.store, ledge.accountId, 'objects');
    const report = await runtime().reload();
    expect(report.failed.get(`${ledge.accountId}/objects`)).toContain('stored broken version of objects');
    expect((await call('/counter/kept')).text).toBe(String(before + 1));
    expect(runtime().status(ledge.accountId).get('objects')?.state).toBe('running');
    expect(runtime().scriptPids(ledge.accountId, 'objects')).toEqual(runtime().pids);
    // And after a crash of that process, the previous version is the one that starts again.
    process.kill(runtime().pids[0]!, 'SIGKILL');
    const next = await waitFor(async () => {
      const answer = await call('/counter/kept').catch(() => undefined);
      return answer && answer.status !== 502 && answer;
    }, 'the process after the crash');
    expect(`${next.status} ${next.text}`).toBe(`200 ${before + 2}`);
    expect(runtime().status(ledge.accountId).get('objects')?.state).toBe('running');
  });
});
