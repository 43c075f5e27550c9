import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressPolicy } from '../../src/egress/index.ts';
import { probe as probeWith } from '../../src/load-balancing/health/probe.ts';
import type { ProbeTarget } from '../../src/load-balancing/health/probe-types.ts';
import { tempDir } from '../helpers/ledge.ts';
import { systemClock } from '../../src/shared/clock.ts';

/** The default policy: loopback origins are allowed, as in local use. */
const probe = (target: ProbeTarget) => probeWith(target, new EgressPolicy({}, systemClock));

const servers: (Server | TcpServer)[] = [];
const dir = tempDir('ledge-tls-');
let tlsPort = 0;
let httpPort = 0;
let tcpPort = 0;
let smtpPort = 0;
const seen: { method: string; host: string | undefined; url: string }[] = [];
let flaky = 0;

async function listen(server: Server | TcpServer): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  // A self-signed certificate for "origin.test": untrusted unless allow_insecure, and the wrong name for other hosts.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=origin.test',
      '-addext',
      'subjectAltName=DNS:origin.test',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  tlsPort = await listen(
    createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_req, res) => res.end('secure ok'),
    ),
  );
  httpPort = await listen(
    createHttpServer((req, res) => {
      seen.push({ method: req.method ?? '', host: req.headers.host, url: req.url ?? '' });
      if (req.url === '/moved') return void res.writeHead(301, { location: '/target' }).end();
      if (req.url === '/flaky') return void res.writeHead(flaky++ % 2 === 0 ? 500 : 200).end();
      if (req.url === '/garbage') return void req.socket.end('NOT HTTP AT ALL\r\n\r\n');
      res.writeHead(200).end('target reached');
    }),
  );
  tcpPort = await listen(createTcpServer((socket) => socket.end()));
  smtpPort = await listen(createTcpServer((socket) => socket.write('220 mail.test ESMTP ready\r\n')));
});
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

function target(overrides: Partial<ProbeTarget>): ProbeTarget {
  return {
    type: 'http',
    address: '127.0.0.1',
    port: httpPort,
    method: 'GET',
    path: '/',
    headers: {},
    timeoutMs: 2000,
    retries: 0,
    expectedCodes: '200',
    expectedBody: '',
    followRedirects: false,
    allowInsecure: false,
    poolId: 'p',
    ...overrides,
  };
}

describe('probes', () => {
  it('https: an untrusted certificate fails unless allow_insecure', async () => {
    const strict = await probe(target({ type: 'https', port: tlsPort, headers: { Host: ['origin.test'] } }));
    expect(strict).toMatchObject({ healthy: false, failureReason: 'TLS untrusted certificate error' });
    const insecure = await probe(
      target({
        type: 'https',
        port: tlsPort,
        headers: { Host: ['origin.test'] },
        allowInsecure: true,
        expectedBody: 'SECURE',
      }),
    );
    expect(insecure).toMatchObject({ healthy: true, failureReason: 'No failures', responseCode: 200 });
  });

  it('sends the monitor method, path and Host header', async () => {
    const result = await probe(target({ method: 'HEAD', path: '/target?x=1', headers: { Host: ['www.example.com'] } }));
    expect(result.healthy).toBe(true);
    expect(seen.at(-1)).toEqual({ method: 'HEAD', host: 'www.example.com', url: '/target?x=1' });
  });

  it('follows redirects only when follow_redirects is set', async () => {
    expect(await probe(target({ path: '/moved' }))).toMatchObject({
      healthy: false,
      failureReason: 'Response code mismatch error',
      responseCode: 301,
    });
    expect(await probe(target({ path: '/moved', expectedCodes: '3xx' }))).toMatchObject({
      healthy: true,
      responseCode: 301,
    });
    expect(
      await probe(target({ path: '/moved', followRedirects: true, expectedBody: 'target reached' })),
    ).toMatchObject({ healthy: true, responseCode: 200 });
  });

  it('retries a failed attempt before calling the check failed', async () => {
    flaky = 0;
    expect((await probe(target({ path: '/flaky', retries: 1 }))).healthy).toBe(true);
    flaky = 0;
    expect((await probe(target({ path: '/flaky', retries: 0 }))).healthy).toBe(false);
  });

  it('classifies an invalid HTTP answer', async () => {
    expect((await probe(target({ path: '/garbage' }))).failureReason).toBe('HTTP Invalid Response');
  });

  it('tcp: healthy when the connection opens, TCP connection failed when refused', async () => {
    expect(await probe(target({ type: 'tcp', method: 'connection_established', port: tcpPort }))).toMatchObject({
      healthy: true,
    });
    const closed = createTcpServer();
    const port = await listen(closed);
    closed.close();
    expect(await probe(target({ type: 'tcp', port }))).toMatchObject({
      healthy: false,
      failureReason: 'TCP connection failed',
    });
  });

  it('smtp: needs the 220 greeting', async () => {
    expect((await probe(target({ type: 'smtp', port: smtpPort }))).healthy).toBe(true);
    expect(await probe(target({ type: 'smtp', port: tcpPort }))).toMatchObject({ healthy: false });
  });

  it('an unknown host name is a DNS failure', async () => {
    expect((await probe(target({ address: 'no-such-host.invalid' }))).failureReason).toBe('DNS Unknown Host');
  });
});
