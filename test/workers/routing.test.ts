import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { accountSubdomain, callFunction, enableWorkersDev, functionsPort, uploadScript } from './helpers.ts';

const CLASS_ENTRYPOINT = `import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint { fetch(request) { return new Response("class " + this.env.WHO); } }`;
const OBJECT = 'export default { greeting: "object", fetch() { return new Response(this.greeting); } };';

/**
 * Host routing: with one routed script the socket reaches it directly (its wrapper answers other hosts);
 * with several, the entry router dispatches. Both must behave the same to clients.
 */
describe('functions: routing by Host', () => {
  let ledge: TestLedge;
  let sub: string;
  const call = (host: string) => callFunction(functionsPort(ledge), host, '/');
  beforeAll(async () => {
    ledge = await startLedge();
    sub = await accountSubdomain(ledge);
  });
  afterAll(async () => ledge?.close());

  it('serves a single class-based script directly and still answers 404 for other hosts', async () => {
    const up = await uploadScript(ledge, 'klass', {
      modules: { 'index.js': CLASS_ENTRYPOINT },
      metadata: { bindings: [{ name: 'WHO', type: 'plain_text', text: 'entrypoint' }] },
    });
    expect(up.status, JSON.stringify(up.body.errors)).toBe(200);
    await enableWorkersDev(ledge, 'klass');
    expect((await call(`klass.${sub}.localhost`)).text).toBe('class entrypoint');
    const other = await call(`other.${sub}.localhost`);
    expect(other.status).toBe(404);
    expect(other.text).toContain(`No function is deployed at other.${sub}.localhost.`);
  });

  it('keeps `this` of an object default export, and routes two scripts through the router', async () => {
    await uploadScript(ledge, 'plain', { modules: { 'index.js': OBJECT } });
    await enableWorkersDev(ledge, 'plain');
    expect((await call(`plain.${sub}.localhost`)).text).toBe('object');
    expect((await call(`klass.${sub}.localhost`)).text).toBe('class entrypoint');
    const unknown = await call(`nope.${sub}.localhost`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain(`No function is deployed at nope.${sub}.localhost.`);
  });

  it('goes back to direct serving when one script is left, with `this` intact', async () => {
    await fetch(`${ledge.apiUrl}/accounts/${ledge.accountId}/workers/scripts/klass/subdomain`, {
      method: 'POST',
      headers: { ...ledge.tokenHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    expect((await call(`plain.${sub}.localhost`)).text).toBe('object');
    expect((await call(`klass.${sub}.localhost`)).status).toBe(404);
  });
});
