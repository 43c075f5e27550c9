import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, api, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';
import { startLedgeTail, startWranglerTail, waitForSessions, type RunningTail } from './tail-helpers.ts';

const WORKER = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    console.log('handling', request.method, url.pathname);
    if (url.pathname === '/boom') {
      console.error('about to fail', { code: 7 });
      throw new TypeError('kaboom ' + url.searchParams.get('n'));
    }
    if (url.pathname === '/env') return new Response(JSON.stringify(Object.keys(env)));
    if (url.pathname === '/search') console.log('needle-' + url.searchParams.get('n'));
    return new Response('ok ' + url.pathname, { status: url.pathname === '/created' ? 201 : 200 });
  },
};
`;

/** `wrangler tail` (the real CLI) against Ledge: the session API, the WebSocket protocol, events and filters. */
describe('wrangler tail', () => {
  let ledge: TestLedge;
  let host: string;
  let port: number;
  const running: RunningTail[] = [];
  const call = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    callFunction(port, host, path, init);
  const tail = async (args: string[]) => {
    const t = startWranglerTail(ledge, ['tailed', '--format', 'json', ...args]);
    running.push(t);
    await waitForSessions(ledge, running.filter((r) => r.child.exitCode === null).length);
    return t;
  };
  const stopAll = async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()));
  };

  beforeAll(async () => {
    ledge = await startLedge();
    expect((await uploadScript(ledge, 'tailed', { modules: { 'index.js': WORKER } })).status).toBe(200);
    await enableWorkersDev(ledge, 'tailed');
    host = `tailed.${await accountSubdomain(ledge)}.localhost`;
    port = functionsPort(ledge);
  });
  // A test that fails before its own stopAll() must not leave sessions that the next tests count.
  afterEach(stopAll, 30_000);
  afterAll(async () => {
    await stopAll();
    await ledge?.close();
  });

  it('streams one JSON event per request with request, response, logs and outcome', async () => {
    // The platform's tail-flag binding does not show in the script's env.
    expect((await call('/env')).text).toBe('[]');
    const t = await tail([]);
    expect((await call('/created?x=1', { headers: { 'x-test': 'yes' } })).status).toBe(201);
    await t.waitForEvent((e) => JSON.stringify(e).includes('created?x=1'));
    const [event] = t.events();
    expect(event).toMatchObject({
      outcome: 'ok',
      scriptName: 'tailed',
      exceptions: [],
      logs: [{ level: 'log', message: ['handling', 'GET', '/created'] }],
      event: {
        request: { method: 'GET', url: `http://${host}:${port}/created?x=1`, headers: { 'x-test': 'yes' } },
        response: { status: 201 },
      },
    });
    expect(typeof event!['eventTimestamp']).toBe('number');
    expect(Math.abs((event!['eventTimestamp'] as number) - Date.now())).toBeLessThan(60_000);
    // No session filters by client address: the peer address is not read (see the --ip test).
    expect((event as { event: { request: { cf: unknown } } }).event.request.cf).toEqual({});
    await stopAll();
  });

  it('reports an uncaught exception with name, message and stack, and the console.error before it', async () => {
    const t = await tail([]);
    expect((await call('/boom?n=1')).status).toBe(500);
    await t.waitForEvent((e) => JSON.stringify(e).includes('kaboom 1'));
    const [event] = t.events();
    expect(event).toMatchObject({
      outcome: 'exception',
      exceptions: [{ name: 'TypeError', message: 'kaboom 1' }],
      logs: [
        { level: 'log', message: ['handling', 'GET', '/boom'] },
        { level: 'error', message: ['about to fail', { code: 7 }] },
      ],
    });
    const exception = (event!['exceptions'] as { stack: string; timestamp: number }[])[0]!;
    expect(exception.stack).toContain('TypeError: kaboom 1');
    expect(exception.stack).toMatch(/at .*index\.js/);
    expect(typeof exception.timestamp).toBe('number');
    await stopAll();
  });

  it('--format pretty prints the request line, the logs and the exception', async () => {
    const t = startWranglerTail(ledge, ['tailed', '--format', 'pretty']);
    running.push(t);
    await t.waitFor((l) => l.includes('Connected to tailed, waiting for logs...'));
    await call('/boom?n=2', { method: 'POST', body: 'x' });
    await t.waitFor((l) => l.includes(`POST http://${host}:${port}/boom?n=2 - Exception Thrown @`));
    await t.waitFor((l) => l.includes('(log) handling POST /boom'));
    // wrangler prints exceptions with logger.error (stderr).
    await vi.waitFor(() => expect(t.stderr.join('\n')).toContain('TypeError: kaboom 2'), { timeout: 15_000 });
    await stopAll();
  });

  it('--status error, --method, --search, --header select the matching events only', async () => {
    const errors = await tail(['--status', 'error']);
    const posts = await tail(['--method', 'POST']);
    const search = await tail(['--search', 'needle-2']);
    const header = await tail(['--header', 'x-pick: me']);
    await call('/ok');
    await call('/boom?n=3');
    await call('/created', { method: 'POST', body: 'b' });
    await call('/search?n=1');
    await call('/search?n=2');
    await call('/ok?picked', { headers: { 'x-pick': 'me' } });
    await call('/ok?not-picked', { headers: { 'x-pick': 'other' } });
    // A last request every session sees, so that all earlier ones have arrived when it has.
    await call('/boom?n=last', { method: 'POST', headers: { 'x-pick': 'me' }, body: 'needle-2' });
    for (const t of [errors, posts, header]) await t.waitForEvent((e) => JSON.stringify(e).includes('kaboom last'));
    // Real time: the sessions must NOT get the requests their filters exclude, and nothing marks that they
    // will not (the events are printed by other processes); what was sent before the last event is here.
    await new Promise((r) => setTimeout(r, 300));
    const paths = (t: RunningTail) =>
      t
        .events()
        .map(
          (e) =>
            new URL((e as { event: { request: { url: string } } }).event.request.url).pathname +
            new URL((e as { event: { request: { url: string } } }).event.request.url).search,
        );
    expect(paths(errors)).toEqual(['/boom?n=3', '/boom?n=last']);
    expect(paths(posts)).toEqual(['/created', '/boom?n=last']);
    expect(paths(search)).toEqual(['/search?n=2']);
    expect(paths(header)).toEqual(['/ok?picked', '/boom?n=last']);
    await stopAll();
  });

  it('--ip selects by the client address (a proxy in front reported, else the peer), and self is the address that opened the session', async () => {
    const listed = await tail(['--ip', '203.0.113.7']);
    // wrangler opens the session from 127.0.0.1 here, so "self" is that address.
    const self = await tail(['--ip', 'self']);
    await call('/ip?cf', { headers: { 'cf-connecting-ip': '203.0.113.7' } });
    await call('/ip?other', { headers: { 'cf-connecting-ip': '198.51.100.1' } });
    await call('/ip?forwarded', { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } });
    await call('/ip?real', { headers: { 'x-real-ip': '127.0.0.1' } });
    // No proxy header: the peer address, this test's own 127.0.0.1 (the events carry it while a session
    // filters by address).
    await call('/ip?direct');
    await call('/boom?n=last', { headers: { 'cf-connecting-ip': '203.0.113.7' } });
    await call('/boom?n=last-self', { headers: { 'x-forwarded-for': '127.0.0.1' } });
    await listed.waitForEvent((e) => JSON.stringify(e).includes('kaboom last"'));
    await self.waitForEvent((e) => JSON.stringify(e).includes('kaboom last-self'));
    // Real time: the sessions must NOT get the requests their filters exclude, and nothing marks that they
    // will not (the events are printed by other processes); what was sent before the last event is here.
    await new Promise((r) => setTimeout(r, 300));
    const paths = (t: RunningTail) =>
      t.events().map((e) => {
        const url = new URL((e as { event: { request: { url: string } } }).event.request.url);
        return url.pathname + url.search;
      });
    expect(paths(listed)).toEqual(['/ip?cf', '/ip?forwarded', '/boom?n=last']);
    expect(paths(self)).toEqual(['/ip?real', '/ip?direct', '/boom?n=last-self']);
    expect(self.events().find((e) => JSON.stringify(e).includes('/ip?direct'))).toMatchObject({
      event: { request: { cf: { clientIp: expect.stringMatching(/^127\.0\.0\.1:\d+$/) } } },
    });
    await stopAll();
  });

  it('--sampling-rate keeps about that share of the events', async () => {
    const t = await tail(['--sampling-rate', '0.3']);
    for (let i = 0; i < 100; i++) await call(`/ok?i=${i}`);
    // Real time: the sampled events are printed by the wrangler process, and no event marks the last of
    // them (the sampling is random), so this waits long enough for all of them to be out.
    await new Promise((r) => setTimeout(r, 1_000));
    const count = t.events().length;
    // Binomial(100, 0.3): 30 +- 4.6; the bounds are > 4 standard deviations away.
    expect(count).toBeGreaterThan(10);
    expect(count).toBeLessThan(55);
    await stopAll();
  });

  it('ledge tail prints one line per request, its console output and the exception stack', async () => {
    const t = startLedgeTail(ledge, ['tailed']);
    running.push(t);
    await waitForSessions(ledge, 1);
    await call('/created', { method: 'PUT', body: 'x' });
    await call('/boom?n=cli');
    await t.waitFor((l) => l.includes('kaboom cli'));
    const out = t.stdout.join('\n');
    expect(out).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z PUT http://${host}:${port}/created 201 \\d+ms ok$`, 'm'),
    );
    expect(out).toContain('  [log] handling PUT /created');
    expect(out).toMatch(new RegExp(`GET http://${host}:${port}/boom\\?n=cli 500 \\d+ms exception`));
    expect(out).toContain('  [error] about to fail {"code":7}');
    expect(out).toContain('  TypeError: kaboom cli');
    expect(out).toMatch(/^ +at .*index\.js/m);
    expect(out).not.toContain('__ledge_');
    await stopAll();
  });

  it("ledge tail --json --status error --method --search select events in wrangler's shape", async () => {
    const errors = startLedgeTail(ledge, ['tailed', '--json', '--status', 'error']);
    const posts = startLedgeTail(ledge, ['tailed', '--json', '--method', 'post']);
    const search = startLedgeTail(ledge, ['tailed', '--json', '--search', 'needle-9']);
    running.push(errors, posts, search);
    await waitForSessions(ledge, 3, 45_000, [errors, posts, search]);
    await call('/ok');
    await call('/search?n=9', { method: 'POST', body: 'b' });
    await call('/boom?n=json');
    await call('/boom?n=final', { method: 'POST', body: 'needle-9' });
    await errors.waitFor((l) => l.includes('kaboom final'));
    await posts.waitFor((l) => l.includes('kaboom final'));
    await search.waitFor((l) => l.includes('needle-9'));
    // Real time: the sessions must NOT get the requests their filters exclude, and nothing marks that they
    // will not (the events are printed by other processes); what was sent before the last event is here.
    await new Promise((r) => setTimeout(r, 300));
    const urls = (t: RunningTail) =>
      t.stdout
        .map((l) => new URL((JSON.parse(l) as { event: { request: { url: string } } }).event.request.url))
        .map((u) => u.pathname + u.search);
    expect(urls(errors)).toEqual(['/boom?n=json', '/boom?n=final']);
    expect(urls(posts)).toEqual(['/search?n=9', '/boom?n=final']);
    expect(urls(search)).toEqual(['/search?n=9']);
    expect(JSON.parse(errors.stdout[0]!)).toMatchObject({
      outcome: 'exception',
      scriptName: 'tailed',
      exceptions: [{ name: 'TypeError' }],
    });
    // A bad flag is a usage error before any session opens.
    const bad = startLedgeTail(ledge, ['tailed', '--status', 'weird']);
    await new Promise<void>((resolve) => bad.child.once('exit', () => resolve()));
    expect(bad.child.exitCode).toBe(2);
    expect(bad.stderr.join('\n')).toContain('--status weird');
    await stopAll();
    await vi.waitFor(() => expect(ledge.server.platform.functions.tails.size).toBe(0), { timeout: 10_000 });
  });

  it('a request killed at its CPU limit is reported as exceededCpu', async () => {
    const spinner = `export default { fetch(request) { if (new URL(request.url).pathname === '/spin') { while (true) {} } return new Response('ok'); } };`;
    const uploaded = await uploadScript(ledge, 'spinner', {
      modules: { 'index.js': spinner },
      metadata: { limits: { cpu_ms: 100 } },
    });
    expect(uploaded.status).toBe(200);
    await enableWorkersDev(ledge, 'spinner');
    const t = startLedgeTail(ledge, ['spinner', '--json']);
    running.push(t);
    await waitForSessions(ledge, 1);
    const spinnerHost = host.replace(/^tailed\./, 'spinner.');
    // Requests that finish just before the spin: their end lines are still queued in the isolate when the
    // spin starts (isolate/trace.ts), so the spinner's start line names them as ended and they must not be
    // reported as killed along with it.
    for (const n of [1, 2, 3]) expect((await callFunction(port, spinnerHost, `/quick-${n}`)).status).toBe(200);
    // The process is killed under it: with one account there is no front process to answer 1102.
    await callFunction(port, spinnerHost, '/spin').catch(() => undefined);
    const line = await t.waitFor((l) => l.includes('exceededCpu'));
    expect(JSON.parse(line)).toMatchObject({
      outcome: 'exceededCpu',
      scriptName: 'spinner',
      event: { request: { method: 'GET', url: `http://${spinnerHost}:${port}/spin` } },
    });
    // None of the quick requests may be reported as killed. No wait is needed for that: the kill reports every
    // request of the process still open in one pass, in the order they started (#sourceExited in
    // src/workerd/tail-traces.ts), so a quick one reported as killed would be printed before /spin's line.
    const events = t.stdout.map((l) => JSON.parse(l) as { outcome: string; event: { request: { url: string } } });
    expect(events.filter((e) => e.outcome === 'exceededCpu').map((e) => new URL(e.event.request.url).pathname)).toEqual(
      ['/spin'],
    );
    expect(events.filter((e) => e.outcome !== 'exceededCpu').every((e) => e.outcome === 'ok')).toBe(true);
    await stopAll();
  });

  it('sessions are listed, deleted, refused across accounts, and end with the script', async () => {
    const base = `/accounts/${ledge.accountId}/workers/scripts/tailed/tails`;
    const created = await api(ledge, 'POST', base, { filters: [] });
    expect(created.status).toBe(200);
    const session = created.body.result as { id: string; url: string; expires_at: string };
    expect(session.id).toMatch(/^[0-9a-f]{32}$/);
    expect(session.url).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${ledge.port}/tail-sessions/${session.id}$`));
    expect(Date.parse(session.expires_at)).toBeGreaterThan(Date.now() + 3600_000);
    expect((await api(ledge, 'GET', base)).body.result).toEqual([session]);
    // Bad filters are a 400 in the envelope, not a session.
    const bad = await api(ledge, 'POST', base, { filters: [{ sampling_rate: 2 }] });
    expect(bad.status).toBe(400);
    expect(bad.body.success).toBe(false);
    // Another account: the script does not exist there / the account is not the caller's.
    const other = await api(ledge, 'GET', `/accounts/ffffffffffffffffffffffffffffffff/workers/scripts/tailed/tails`);
    expect([403, 404]).toContain(other.status);
    expect((await api(ledge, 'DELETE', `${base}/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await api(ledge, 'DELETE', `${base}/${session.id}`)).status).toBe(200);
    expect((await api(ledge, 'GET', base)).body.result).toEqual([]);
    // A connected wrangler stops when the script is deleted; nothing is left behind.
    const t = await tail([]);
    expect(ledge.server.platform.functions.tails.size).toBe(1);
    expect((await api(ledge, 'DELETE', `/accounts/${ledge.accountId}/workers/scripts/tailed`)).status).toBe(200);
    await new Promise<void>((resolve) =>
      t.child.exitCode === null ? t.child.once('exit', () => resolve()) : resolve(),
    );
    expect(ledge.server.platform.functions.tails.size).toBe(0);
    expect(ledge.server.platform.functions.traces.pendingCount).toBe(0);
  });
});
