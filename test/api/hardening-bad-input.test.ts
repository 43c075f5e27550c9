import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/index.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { envelopeOf } from '../helpers/envelope.ts';
import { startLedge, TEST_CREDENTIALS, type TestLedge } from '../helpers/ledge.ts';
import { api, callFunction, enableWorkersDev, functionsPort, uploadScript } from '../workers/helpers.ts';
import { AUTH, rawSocket } from './hardening-helpers.ts';
import { poll } from '../helpers/wait.ts';

const ACCOUNT = `/accounts/${TEST_CREDENTIALS.accountId}`;

/** Issue 12, points 5 and 7: a client's mistake is a clear 4xx in the v4 envelope, never a 5xx. */
describe('bad input gets a 4xx, never a 5xx', () => {
  let server: RunningServer;
  let ledge: TestLedge;
  const logLines: { level: string; msg: string }[] = [];

  beforeAll(async () => {
    // Every log line at debug level, to see how a client that went away is logged.
    ledge = await startLedge({
      flags: { functionsProcesses: 1 },
      logger: createLogger('debug', systemClock, {}, (line) =>
        logLines.push(JSON.parse(line) as { level: string; msg: string }),
      ),
    });
    server = ledge.server;
    expect((await uploadScript(ledge, 'present')).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  const errorLines = () => logLines.filter((line) => line.level === 'error');

  async function expectClientError(response: Response, status: number, code?: number) {
    const text = await response.text();
    expect(response.status, text).toBe(status);
    const body = JSON.parse(text);
    expect(body).toMatchObject({ success: false, result: null, messages: [] });
    expect(body.errors.length).toBeGreaterThan(0);
    if (code !== undefined) expect(body.errors[0].code).toBe(code);
    return body.errors[0].message as string;
  }

  it('answers malformed percent-escapes in any path segment with a 4xx', async () => {
    const paths = [
      '/accounts/%ff',
      '/accounts/%ff/workers/scripts',
      '/accounts/%E0%A4%A/r2/buckets',
      `${ACCOUNT}/workers/scripts/%ff`,
      `${ACCOUNT}/workers/scripts/present/secrets/%ff`,
      `${ACCOUNT}/workers/scripts/present/versions/%c3%28`,
      `${ACCOUNT}/r2/buckets/%ff`,
      `${ACCOUNT}/r2/buckets/%ff/objects/%ff%fe`,
      `${ACCOUNT}/load_balancers/pools/%ff`,
      `${ACCOUNT}/load_balancers/monitors/%`,
      `${ACCOUNT}/alerting/v3/policies/%ff`,
      '/%ff',
      '/user/tokens/%ff',
    ];
    for (const path of paths) {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(`${server.apiUrl}${path}`, { method, headers: AUTH });
        expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${method} ${path}`).toBeLessThan(500);
        expect(((await response.json()) as { success: boolean }).success).toBe(false);
      }
    }
    expect(errorLines()).toEqual([]);
  });

  it('answers requests node:http cannot parse in the envelope (bad target, invalid header, headers too large)', async () => {
    const cases: [string, number, number][] = [
      ['GET x HTTP/1.1\r\nhost: a\r\n\r\n', 400, 1001],
      ['GET /client/v4/user HTTP/1.1\r\nhost: a\r\nbad header: x\r\n\r\n', 400, 1001],
      [`GET /client/v4/user HTTP/1.1\r\nhost: a\r\nx-big: ${'a'.repeat(64 * 1024)}\r\n\r\n`, 431, 10431],
    ];
    for (const [text, status, code] of cases) {
      const socket = await rawSocket(server.port, text);
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      await new Promise((resolve) => socket.once('close', resolve));
      expect(answer, text.slice(0, 40)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ success: false, result: null, errors: [{ code }] });
    }
  });

  it('refuses an impossible compatibility date with 400', async () => {
    for (const date of ['2025-13-45', '2025-02-30', '0000-00-00', '2025-1-1', '9999-99-99']) {
      const { status, body } = await uploadScript(ledge, 'dated', { metadata: { compatibility_date: date } });
      expect(status, date).toBe(400);
      expect(body.errors[0]).toMatchObject({ code: 10021 });
      expect(body.errors[0].message).toContain('compatibility_date');
    }
  });

  it('refuses JSON nested 50,000 deep in bindings, annotations and any JSON body', async () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const form = (metadata: string) => {
      const data = new FormData();
      data.set('metadata', metadata);
      data.set(
        'w.js',
        new File(['export default { fetch() { return new Response("x"); } };'], 'w.js', {
          type: 'application/javascript+module',
        }),
      );
      return data;
    };
    for (const metadata of [
      `{"main_module":"w.js","bindings":[{"name":"J","type":"json","json":${deep}}]}`,
      `{"main_module":"w.js","annotations":{"workers/message":${deep}}}`,
      `{"main_module":"w.js","compatibility_flags":${deep}}`,
    ]) {
      const response = await fetch(`${server.apiUrl}${ACCOUNT}/workers/scripts/deep`, {
        method: 'PUT',
        headers: AUTH,
        body: form(metadata),
      });
      expect(await expectClientError(response, 400, 10021)).toMatch(/nested deeper than 100 levels/);
    }
    const jsonBodies: [string, string][] = [
      [`${ACCOUNT}/workers/scripts/present/deployments`, `{"versions":[],"annotations":{"a":${deep}}}`],
      [`${ACCOUNT}/load_balancers/pools`, `{"name":"p","origins":${deep}}`],
      [`${ACCOUNT}/alerting/v3/policies`, `{"name":"p","mechanisms":${deep}}`],
      [`${ACCOUNT}/r2/buckets`, deep],
    ];
    for (const [path, body] of jsonBodies) {
      const response = await fetch(`${server.apiUrl}${path}`, { method: 'POST', headers: AUTH, body });
      expect(await expectClientError(response, 400)).toMatch(/nested deeper than 100 levels/);
    }
    // Nothing was half-written.
    expect((await api(ledge, 'GET', `${ACCOUNT}/workers/scripts/deep/settings`)).status).toBe(404);
    expect(errorLines()).toEqual([]);
  });

  it('answers Host constructor.<domain> and __proto__.<domain> on the functions port with 404', async () => {
    expect((await uploadScript(ledge, 'second')).status).toBe(200);
    expect((await enableWorkersDev(ledge, 'present')).status).toBe(200);
    expect((await enableWorkersDev(ledge, 'second')).status).toBe(200);
    const port = functionsPort(ledge);
    for (const label of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const answer = await callFunction(port, `${label}.localhost`, '/');
      expect(answer.status, label).toBe(404);
      expect(answer.text).toContain('No function is deployed at');
    }
  });

  it('logs a client that disconnects mid-body at debug level, not as an error', async () => {
    const before = logLines.length;
    const requests = [
      `PUT /client/v4${ACCOUNT}/workers/scripts/gone HTTP/1.1\r\ncontent-type: multipart/form-data; boundary=b\r\n`,
      `POST /client/v4${ACCOUNT}/r2/buckets HTTP/1.1\r\ncontent-type: application/json\r\n`,
      `PUT /client/v4${ACCOUNT}/workers/scripts/present/secrets HTTP/1.1\r\n`,
    ];
    expect((await api(ledge, 'POST', `${ACCOUNT}/r2/buckets`, { name: 'gone-bucket' })).status).toBe(200);
    requests.push(`PUT /client/v4${ACCOUNT}/r2/buckets/gone-bucket/objects/half HTTP/1.1\r\n`);
    for (const head of requests) {
      const socket = await rawSocket(
        server.port,
        `${head}host: 127.0.0.1\r\nauthorization: ${AUTH.authorization}\r\ncontent-length: 1048576\r\n\r\n--b\r\n{"name":`,
      );
      // Real time: the server must be reading this body when the client goes (bytes in flight on a socket,
      // nothing to poll), so that the disconnect lands mid-request.
      await new Promise((resolve) => setTimeout(resolve, 150));
      socket.destroy();
    }
    await poll(() => logLines.slice(before).filter((l) => l.msg === 'client went away mid-request').length >= 4, {
      timeoutMs: 30_000,
    });
    const lines = logLines.slice(before);
    expect(lines.filter((l) => l.msg === 'client went away mid-request' && l.level === 'debug')).toHaveLength(4);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    // The interrupted object upload left no object behind.
    const half = await fetch(`${server.apiUrl}${ACCOUNT}/r2/buckets/gone-bucket/objects/half`, { headers: AUTH });
    expect(half.status).toBe(404);
  });
});

describe('size limits on names and values, with messages that do not echo the input', () => {
  let server: RunningServer;
  let ledge: TestLedge;

  beforeAll(async () => {
    ledge = await startLedge({ flags: { functionsProcesses: 1 } });
    server = ledge.server;
    expect((await uploadScript(ledge, 'limits')).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  /** No answer may quote more than about 200 bytes of what was sent: no 201-character run of it. */
  function expectNoLongEcho(message: string, input: string) {
    expect(message.length).toBeLessThanOrEqual(400);
    for (let start = 0; start + 201 <= input.length; start += 97) {
      expect(message).not.toContain(input.slice(start, start + 201));
    }
  }

  const long = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(65 + (i % 26))).join('');

  it('limits secret names to 255 characters and secret values to 5 KiB (Cloudflare: 5 KB per variable)', async () => {
    const path = `${ACCOUNT}/workers/scripts/limits/secrets`;
    const name = `S${long(100_000)}`;
    const tooLongName = await api(ledge, 'PUT', path, { name, text: 'x', type: 'secret_text' });
    expect(tooLongName.status).toBe(400);
    expect(tooLongName.body.errors[0].message).toMatch(/limited to 255 characters/);
    expectNoLongEcho(tooLongName.body.errors[0].message, name);

    const value = long(5 * 1024 + 1);
    const tooBig = await api(ledge, 'PUT', path, { name: 'BIG', text: value, type: 'secret_text' });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors[0].message).toMatch(/5121 bytes.*limited to 5120 bytes/);
    expect(tooBig.body.errors[0].message).not.toContain(value.slice(0, 50));

    const fits = await api(ledge, 'PUT', path, { name: 'FITS', text: long(5 * 1024), type: 'secret_text' });
    expect(fits.status).toBe(200);
    const badName = await api(ledge, 'PUT', path, { name: `1${long(5000)}`, text: 'x', type: 'secret_text' });
    expect(badName.status).toBe(400);
    expectNoLongEcho(badName.body.errors[0].message, badName.body.errors[0].message.length > 0 ? `1${long(5000)}` : '');
  });

  it('limits binding names, variable sizes and the number of variables in an upload', async () => {
    const name = `B${long(300)}`;
    const longName = await uploadScript(ledge, 'limits', {
      metadata: { bindings: [{ name, type: 'plain_text', text: 'x' }] },
    });
    expect(longName.status).toBe(400);
    expectNoLongEcho(longName.body.errors[0].message, name);

    const bigText = await uploadScript(ledge, 'limits', {
      metadata: { bindings: [{ name: 'T', type: 'plain_text', text: long(6000) }] },
    });
    expect(bigText.status).toBe(400);
    expect(bigText.body.errors[0].message).toMatch(/6000 bytes/);

    const bigJson = await uploadScript(ledge, 'limits', {
      metadata: { bindings: [{ name: 'J', type: 'json', json: { text: long(6000) } }] },
    });
    expect(bigJson.status).toBe(400);

    const bigSecret = await uploadScript(ledge, 'limits', {
      metadata: { bindings: [{ name: 'S', type: 'secret_text', text: long(6000) }] },
    });
    expect(bigSecret.status).toBe(400);

    const many = Array.from({ length: 129 }, (_, i) => ({ name: `V${i}`, type: 'plain_text', text: 'x' }));
    const tooMany = await uploadScript(ledge, 'limits', { metadata: { bindings: many } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors[0].message).toMatch(/129 variables and secrets: the limit is 128/);
    expect((await uploadScript(ledge, 'limits', { metadata: { bindings: many.slice(0, 100) } })).status).toBe(200);

    const bucket = long(10_000);
    const bucketBinding = await uploadScript(ledge, 'limits', {
      metadata: { bindings: [{ name: 'B', type: 'r2_bucket', bucket_name: bucket }] },
    });
    expect(bucketBinding.status).toBe(400);
    expectNoLongEcho(bucketBinding.body.errors[0].message, bucket);

    const flag = long(10_000);
    const flags = await uploadScript(ledge, 'limits', { metadata: { compatibility_flags: [flag] } });
    expect(flags.status).toBe(400);
    expectNoLongEcho(flags.body.errors[0].message, flag);
  });

  it('limits script names to 63 characters without echoing a long one', async () => {
    const name = `a${long(5000).toLowerCase()}`;
    const { status, body } = await uploadScript(ledge, name);
    expect(status).toBe(400);
    expect(body.errors[0].code).toBe(10016);
    expectNoLongEcho(body.errors[0].message, name);
    const notFound = await api(ledge, 'GET', `${ACCOUNT}/workers/scripts/limits/versions/${name}`);
    expect(notFound.status).toBe(404);
    expectNoLongEcho(notFound.body.errors[0].message, name);
  });

  it('applies the annotation limits: workers/tag up to 25 characters, workers/message cut to 100 bytes', async () => {
    const tag = await uploadScript(ledge, 'limits', { metadata: { annotations: { 'workers/tag': long(26) } } });
    expect(tag.status).toBe(400);
    const message = `${'é'.repeat(80)}`;
    const cut = await uploadScript(ledge, 'limits', {
      metadata: { annotations: { 'workers/message': message, 'workers/tag': 'v1' } },
    });
    expect(cut.status).toBe(200);
    const deployments = await api(ledge, 'GET', `${ACCOUNT}/workers/scripts/limits/deployments`);
    const latest = deployments.body.result.deployments[0];
    expect(latest.annotations['workers/message']).toBe('é'.repeat(50));
  });

  it('clips long input in route errors, JSON parser messages and schema messages', async () => {
    const path = `/${long(8000)}`;
    const missing = await fetch(`${server.apiUrl}${path}`, { headers: AUTH });
    expect(missing.status).toBe(404);
    expectNoLongEcho((await envelopeOf(missing)).errors[0].message, path);

    const junk = `{"name": ${long(5000)}}`;
    const malformed = await fetch(`${server.apiUrl}${ACCOUNT}/r2/buckets`, {
      method: 'POST',
      headers: AUTH,
      body: junk,
    });
    expect(malformed.status).toBe(400);
    expectNoLongEcho((await envelopeOf(malformed)).errors[0].message, junk);

    const key = long(5000);
    const unknownKey = await api(ledge, 'POST', `${ACCOUNT}/load_balancers/monitors`, { [key]: 1 });
    expect(unknownKey.status).toBe(400);
    expectNoLongEcho(unknownKey.body.errors[0].message, key);
  });
});
