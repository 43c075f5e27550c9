import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { api, uploadScript } from '../workers/helpers.ts';

const SOCKETS = `export default { fetch(request) {
  if (request.headers.get('upgrade') !== 'websocket') return new Response('plain ' + request.headers.get('host'));
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.addEventListener('message', (event) => server.send('echo ' + event.data + ' via ' + new URL(request.url).host));
  return new Response(null, { status: 101, webSocket: client });
} };`;

/**
 * Requests the raw proxy hands to node:http (WebSocket upgrades, HTTP/1.0) reach a routed Worker too, with
 * the routing header and the client's Host.
 */
describe('worker routes: requests on the node:http hand-off', () => {
  let ledge: TestLedge;
  let port: number;
  beforeAll(async () => {
    ledge = await startLedge();
    port = ledge.server.platform.traffic.port!;
    const zone = await api(ledge, 'POST', '/zones', { name: 'ws.example', account: { id: ledge.accountId } });
    expect((await uploadScript(ledge, 'sockets', { modules: { 'index.js': SOCKETS } })).status).toBe(200);
    const route = await api(ledge, 'POST', `/zones/${zone.body.result.id}/workers/routes`, {
      pattern: 'chat.ws.example/*',
      script: 'sockets',
    });
    expect(route.status).toBe(200);
  });
  afterAll(async () => ledge?.close());

  it('relays a WebSocket to the Worker of the route', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/room`, { headers: { host: 'chat.ws.example' } });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.on('open', () => socket.send('hello'));
      socket.on('message', (data) => resolve(String(data)));
      socket.on('error', reject);
    });
    socket.close();
    expect(reply).toBe('echo hello via chat.ws.example');
  });

  it('answers an HTTP/1.0 request from the Worker', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const client = connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.0\r\nHost: chat.ws.example\r\n\r\n'));
      client.on('data', (chunk: Buffer) => (text += chunk.toString()));
      client.on('end', () => resolve(text));
      client.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.[01] 200/);
    expect(answer).toContain('plain chat.ws.example');
  });
});
