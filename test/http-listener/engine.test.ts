import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/server/settings/index.ts';
import { createHttpServer } from '../../src/shared/http-listener/http-server.ts';
import { listen } from '../../src/shared/http-listener/listen.ts';
import { httpConnections, stopGracefully } from '../../src/shared/http-listener/stop.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../src/shared/http-timeouts.ts';
import { tempDir } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';

/** The listener engine every HTTP port of Ledge uses (src/shared/http-listener/), on real sockets. */
describe('HTTP listener engine', () => {
  const open: { close(): unknown }[] = [];
  afterEach(() => {
    for (const server of open.splice(0)) server.close();
  });

  const started = async (handler: Parameters<typeof createHttpServer>[1]): Promise<[Server, number]> => {
    const server = createHttpServer({ timeouts: DEFAULT_HTTP_TIMEOUTS }, handler);
    open.push(server);
    const port = await listen(server, { host: '127.0.0.1', port: 0, what: 'S3 API', setting: SETTINGS.s3ApiPort });
    return [server, port];
  };

  it('applies the timeouts it is given', async () => {
    const [server] = await started((_req, res) => res.end());
    expect(server.headersTimeout).toBe(DEFAULT_HTTP_TIMEOUTS.headersMs);
    expect(server.requestTimeout).toBe(DEFAULT_HTTP_TIMEOUTS.requestMs);
    expect(server.keepAliveTimeout).toBe(DEFAULT_HTTP_TIMEOUTS.keepAliveMs);
    expect(server.timeout).toBe(DEFAULT_HTTP_TIMEOUTS.idleMs);
  });

  it('refuses a taken port naming the flag and the variable of the setting that moves it', async () => {
    const holder = createNetServer();
    open.push(holder);
    const taken = await listen(holder, { host: '127.0.0.1', port: 0, what: 'x', setting: SETTINGS.port });
    const server = createHttpServer({ timeouts: {} }, (_req, res) => res.end());
    const failure = listen(server, { host: '127.0.0.1', port: taken, what: 'S3 API', setting: SETTINGS.s3ApiPort });
    await expect(failure).rejects.toThrow(
      `S3 API port ${taken} on 127.0.0.1 is in use by another process (another ledge server?): stop it, or ` +
        'choose another port with --s3-api-port (env LEDGE_S3_API_PORT)',
    );
  });

  it('stops gracefully: idle connections close at once, a request in flight finishes, a late one is cut', async () => {
    let finishSlow: (() => void) | undefined;
    let neverArrived = false;
    const [server, port] = await started((req, res) => {
      if (req.url === '/slow') finishSlow = () => res.end('slow done');
      else if (req.url === '/never') {
        neverArrived = true;
        res.write('partial');
      } else res.end('fast');
    });
    const idle = await keptAlive(port);
    const idleClosed = new Promise((resolve) => idle.once('close', resolve));
    const slow = get(port, '/slow');
    const never = get(port, '/never');
    await waitFor(() => finishSlow !== undefined && neverArrived, 'both requests at the server');
    const stopped = stopGracefully(server, httpConnections(server), 1_000);
    await idleClosed;
    finishSlow!();
    expect(await slow).toBe('slow done');
    await expect(never).rejects.toThrow();
    await stopped;
    expect(server.listening).toBe(false);
  });

  it('serves HTTPS with the certificate an SNI callback picks', async () => {
    const dir = tempDir('ledge-tls-');
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=bucket.example.test'],
      ...['-addext', 'subjectAltName=DNS:bucket.example.test'],
    ]);
    const pem = { key: readFileSync(key), cert: readFileSync(cert) };
    const asked: string[] = [];
    const server = createHttpServer(
      {
        timeouts: DEFAULT_HTTP_TIMEOUTS,
        tls: {
          SNICallback: (name, done) => {
            asked.push(name);
            done(null, createSecureContext(pem));
          },
        },
      },
      (req, res) => res.end(`hello over ${'encrypted' in req.socket ? 'TLS' : 'plain'}`),
    );
    open.push(server);
    const port = await listen(server, { host: '127.0.0.1', port: 0, what: 'test', setting: SETTINGS.trafficPort });
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, path: '/', servername: 'bucket.example.test', ca: pem.cert, agent: false },
        (res) => collect(res).then(resolve, reject),
      );
      req.once('error', reject).end();
    });
    expect(body).toBe('hello over TLS');
    expect(asked).toEqual(['bucket.example.test']);
    await stopGracefully(server, httpConnections(server));
  });
});

function collect(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => resolve(Buffer.concat(chunks).toString()));
    res.once('error', reject);
    res.once('aborted', () => reject(new Error('aborted')));
  });
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) =>
      collect(res).then(resolve, reject),
    );
    req.once('error', reject).end();
  });
}

/** A connection that made one request and stays open, idle (keep-alive). */
function keptAlive(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
    socket.once('data', () => resolve(socket));
    socket.once('error', reject);
  });
}
