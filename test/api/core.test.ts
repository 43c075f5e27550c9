import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelopeOf } from '../helpers/envelope.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

let ledge: TestLedge;
beforeAll(async () => {
  ledge = await startLedge();
});
afterAll(() => ledge.close());

const call = (path: string, init: RequestInit = {}) =>
  fetch(ledge.apiUrl + path, {
    ...init,
    headers: { ...ledge.tokenHeaders, ...(init.headers as Record<string, string>) },
  });

describe('v4 envelope', () => {
  it('wraps successes with success/errors/messages/result and JSON content type', async () => {
    const res = await call('/user');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = await envelopeOf(res);
    expect(body).toMatchObject({ success: true, errors: [], messages: [], result: { email: ledge.email } });
  });

  it('answers unknown routes with 404 and code 7003, in the envelope', async () => {
    const res = await call('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await envelopeOf(res);
    expect(body.success).toBe(false);
    expect(body.result).toBeNull();
    expect(body.errors[0].code).toBe(7003);
    expect(body.errors[0].message).toContain('/client/v4/no/such/route');
  });

  it('answers paths outside /client/v4 in the envelope too', async () => {
    const res = await fetch(ledge.apiUrl.replace('/client/v4', '/elsewhere'));
    expect(res.status).toBe(404);
    expect((await envelopeOf(res)).errors[0].code).toBe(7003);
  });

  it('parses JSON bodies whatever the content type says (wrangler sends text/plain)', async () => {
    const res = await call(`/accounts/${ledge.accountId}`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ name: 'Renamed Account' }),
    });
    expect(res.status).toBe(200);
    expect((await envelopeOf(res)).result.name).toBe('Renamed Account');
  });

  it('refuses invalid JSON with 400 and a clear message, changing nothing', async () => {
    const before = (await envelopeOf(await call(`/accounts/${ledge.accountId}`))).result.name;
    const res = await call(`/accounts/${ledge.accountId}`, { method: 'PUT', body: '{"name": ' });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-should-retry')).toBe('false');
    const body = await envelopeOf(res);
    expect(body.errors[0].code).toBe(1001);
    expect(body.errors[0].message).toMatch(/Malformed JSON/);
    expect((await envelopeOf(await call(`/accounts/${ledge.accountId}`))).result.name).toBe(before);
  });

  it('refuses schema violations with the field path', async () => {
    const res = await call(`/accounts/${ledge.accountId}`, { method: 'PUT', body: JSON.stringify({ name: '' }) });
    expect(res.status).toBe(400);
    expect((await envelopeOf(res)).errors[0].message).toMatch(/^name: /);
    const unknown = await call(`/accounts/${ledge.accountId}`, {
      method: 'PUT',
      body: JSON.stringify({ name: 'x', colour: 1 }),
    });
    expect(unknown.status).toBe(400);
    expect((await envelopeOf(unknown)).errors[0].message).toMatch(/colour/);
  });

  it('refuses an oversized body with 413 in the envelope', async () => {
    const huge = JSON.stringify({ name: 'x'.repeat(11 * 1024 * 1024) });
    const res = await call(`/accounts/${ledge.accountId}`, { method: 'PUT', body: huge });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await envelopeOf(res)).errors[0].code).toBe(1013);
  });

  it('refuses an oversized chunked body (no Content-Length) with 413', async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x61);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 12) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await call(`/accounts/${ledge.accountId}`, {
      method: 'PUT',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });
});
