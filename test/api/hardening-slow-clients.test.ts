import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServerConfig } from '../../src/server/index.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../src/shared/http-timeouts.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { AUTH, closedWithin, rawSocket } from './hardening-helpers.ts';

/** The HTTP timeouts the server's settings give its listeners from this environment. */
const httpTimeouts = (env: NodeJS.ProcessEnv) => resolveServerConfig({}, env).httpTimeouts;
// Long enough that 20 requests on a busy machine are answered before the half-open connections time out, and
// below the idle timeout, which would otherwise close them first without the 408.
const HEADERS_MS = 4_000;
const KEEPALIVE_MS = 1_000;
const IDLE_MS = 5_000;

/** Slow and idle clients are bounded (they would hold sockets and memory forever); the API keeps answering meanwhile. */
describe('slow clients', () => {
  let ledge: TestLedge;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    ledge = await startLedge({
      flags: { functionsProcesses: 1 },
      env: {
        LEDGE_HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        LEDGE_HTTP_KEEPALIVE_TIMEOUT_MS: String(KEEPALIVE_MS),
        LEDGE_HTTP_IDLE_TIMEOUT_MS: String(IDLE_MS),
      },
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await ledge?.close();
  });

  it('keeps answering with 300 half-open connections, and closes them after the headers timeout', async () => {
    for (let i = 0; i < 300; i++) {
      sockets.push(
        await rawSocket(ledge.port, `GET /client/v4/user/tokens/verify HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow`),
      );
    }
    let firstAnswer = '';
    sockets[0]!.on('data', (d: Buffer) => (firstAnswer += d.toString()));
    const started = Date.now();
    let closedSoFar = 0;
    for (const socket of sockets) socket.once('close', () => closedSoFar++);
    const closing = sockets.map((socket) => closedWithin(socket, HEADERS_MS + 30_000));
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${ledge.apiUrl}/user/tokens/verify`, { headers: AUTH });
      expect(response.status).toBe(200);
      await response.json();
    }
    // Answered while the 300 are still open, not once the headers timeout has cleared them away.
    expect(closedSoFar).toBe(0);
    const closed = await Promise.all(closing);
    expect(closed.every(Boolean)).toBe(true);
    // Told why, in the envelope, before the connection closed.
    expect(firstAnswer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(firstAnswer.slice(firstAnswer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      success: false,
      errors: [{ code: 10408 }],
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_MS - 200);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const socket = await rawSocket(
      ledge.port,
      `GET /client/v4/user/tokens/verify HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${AUTH.authorization}\r\n\r\n`,
    );
    sockets.push(socket);
    const answered = Date.now();
    const firstChunk = await new Promise<string>((resolve) =>
      socket.once('data', (d: Buffer) => resolve(d.toString())),
    );
    expect(firstChunk).toMatch(/^HTTP\/1\.1 200/);
    expect(firstChunk.toLowerCase()).toContain('keep-alive');
    expect(await closedWithin(socket, KEEPALIVE_MS + 30_000)).toBe(true);
    expect(Date.now() - answered).toBeGreaterThanOrEqual(KEEPALIVE_MS - 200);
  });

  it('closes a connection whose body stalls for the idle timeout, but not one that keeps sending', async () => {
    const stalled = await rawSocket(
      ledge.port,
      `POST /client/v4/accounts/${ledge.accountId}/r2/buckets HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${AUTH.authorization}\r\ncontent-length: 100\r\n\r\n{"name":`,
    );
    sockets.push(stalled);
    const started = Date.now();
    const stalledClosed = closedWithin(stalled, IDLE_MS + 30_000);

    // Meanwhile a slow client sends its body a byte every 300 ms, for longer than the idle timeout.
    const body = '{"name":"slow-but-alive"}';
    const slow = await rawSocket(
      ledge.port,
      `POST /client/v4/accounts/${ledge.accountId}/r2/buckets HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: ${AUTH.authorization}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`,
    );
    sockets.push(slow);
    let answer = '';
    slow.on('data', (d: Buffer) => (answer += d.toString()));
    const trickleStarted = Date.now();
    for (const char of body) {
      slow.write(char);
      // The slow client itself: one byte per 300 ms of real time is what this test sends.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(Date.now() - trickleStarted).toBeGreaterThan(IDLE_MS);
    expect(await closedWithin(slow, 30_000)).toBe(true);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);

    expect(await stalledClosed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_MS - 200);
  });

  it('has documented defaults fit for 5 GiB uploads, and refuses nonsense settings', () => {
    expect(httpTimeouts({})).toEqual(DEFAULT_HTTP_TIMEOUTS);
    expect(DEFAULT_HTTP_TIMEOUTS.headersMs).toBe(30_000);
    // 5 GiB within the request timeout needs no more than 0.75 MiB/s.
    expect((5 * 1024) / (DEFAULT_HTTP_TIMEOUTS.requestMs / 1000)).toBeLessThan(0.75);
    expect(() => httpTimeouts({ LEDGE_HTTP_HEADERS_TIMEOUT_MS: 'soon' })).toThrow(/LEDGE_HTTP_HEADERS_TIMEOUT_MS/);
    expect(() => httpTimeouts({ LEDGE_HTTP_IDLE_TIMEOUT_MS: '5' })).toThrow(/100 to 86400000/);
  });
});
