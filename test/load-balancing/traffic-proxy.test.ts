import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { createInterface } from 'node:readline';
import { Agent as UndiciAgent, WebSocket as UndiciWebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import { ManualClock } from '../helpers/manual-clock.ts';
import {
  createLoadBalancer,
  createPool,
  createZone,
  NamedOrigin,
  trafficPort,
  trafficRequest,
} from './traffic-helpers.ts';

/** A port whose accept queue is full: connecting hangs (SYNs dropped), as with a firewalled origin. */
async function blackholePort(): Promise<{ port: number; child: ChildProcess }> {
  // The fixture's 0.2 s of real time: the kernel completes the handshakes that fill the queue before the port
  // is handed out (non-blocking connects give nothing to wait on).
  const script = [
    'import socket, time',
    "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(0)",
    'port = s.getsockname()[1]; fill = []',
    'for _ in range(4):',
    '    c = socket.socket(); c.setblocking(False)',
    '    try: c.connect((chr(49)+"27.0.0.1", port))',
    '    except BlockingIOError: pass',
    '    fill.append(c)',
    'time.sleep(0.2); print(port, flush=True); time.sleep(600)',
  ].join('\n');
  const child = spawn('python3', ['-u', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  return { port: Number(line), child };
}

describe('load balancer traffic: proxying', () => {
  const clock = new ManualClock();
  let ledge: TestLedge;
  let port: number;
  let zoneId: string;
  const origins: Record<string, NamedOrigin> = {};
  let garbage: TcpServer;
  let blackhole: { port: number; child: ChildProcess };
  let hostCount = 0;

  const balance = async (poolOrigins: Parameters<typeof createPool>[2], extra: Record<string, unknown> = {}) => {
    const name = `lb${++hostCount}.proxy.test`;
    const pool = await createPool(ledge, `p${hostCount}`, poolOrigins, extra);
    await createLoadBalancer(ledge, zoneId, { name, default_pools: [pool], fallback_pool: pool });
    return name;
  };
  const rawOrigin = (name: string, port: number) => ({ name, address: '127.0.0.1', port });

  beforeAll(async () => {
    ledge = await startLedge({
      env: { LEDGE_LB_RESPONSE_TIMEOUT_MS: '1500', LEDGE_LB_CONNECT_TIMEOUT_MS: '1000' },
      // Passive health's time (no pool here has a monitor: nothing else runs on it).
      clock,
    });
    port = trafficPort(ledge);
    zoneId = await createZone(ledge, 'proxy.test');
    for (const name of ['one', 'two', 'stopped']) origins[name] = await NamedOrigin.start(name);
    await origins['stopped']!.stop();
    garbage = createTcpServer((socket) => socket.end('THIS IS NOT HTTP\r\n\r\n'));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    blackhole = await blackholePort();
  });
  afterAll(async () => {
    await ledge.close();
    for (const origin of Object.values(origins)) await origin.stop();
    garbage.close();
    blackhole.child.kill();
  });

  it('forwards X-Forwarded-For, X-Forwarded-Proto and CF-Connecting-IP, keeps Host, drops hop-by-hop headers', async () => {
    const name = await balance([origins['one']!]);
    const answer = await trafficRequest(port, name, '/headers', {
      headers: {
        'x-forwarded-for': '203.0.113.7',
        'x-custom': 'kept',
        connection: 'keep-alive, x-hop',
        'x-hop': 'dropped',
      },
    });
    expect(answer.status).toBe(200);
    const headers = JSON.parse(answer.body) as Record<string, string>;
    expect(headers['host']).toBe(name);
    expect(headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['cf-connecting-ip']).toBe('127.0.0.1');
    expect(headers['x-custom']).toBe('kept');
    expect(headers['x-hop']).toBeUndefined();
    expect(answer.headers['x-origin']).toBe('one');
  });

  it("sends the origin's header.Host override instead of the client's Host", async () => {
    const name = await balance([{ origin: origins['two']!, header: { Host: ['internal.example'] } }]);
    const headers = JSON.parse((await trafficRequest(port, name, '/headers')).body) as Record<string, string>;
    expect(headers['host']).toBe('internal.example');
  });

  it('streams bodies both ways: a 48 MiB upload echoed back intact, a 64 MiB download', async () => {
    const name = await balance([origins['one']!]);
    const chunk = randomBytes(1024 * 1024);
    const sent = createHash('sha256');
    const received = createHash('sha256');
    let receivedBytes = 0;
    let firstByteBeforeUploadEnd = false;
    let uploadDone = false;
    await new Promise<void>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { host: name }, agent: false },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', (data: Buffer) => {
            if (!uploadDone) firstByteBeforeUploadEnd = true;
            received.update(data);
            receivedBytes += data.length;
          });
          res.on('end', () => resolve());
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      let left = 48;
      const pump = () => {
        while (left > 0) {
          left--;
          sent.update(chunk);
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        uploadDone = true;
        req.end();
      };
      pump();
    });
    expect(receivedBytes).toBe(48 * 1024 * 1024);
    expect(received.digest('hex')).toBe(sent.digest('hex'));
    // The echo began before the upload finished: nothing buffered the whole body in between.
    expect(firstByteBeforeUploadEnd).toBe(true);

    const download = await new Promise<number>((resolve, reject) => {
      request(
        { host: '127.0.0.1', port, path: `/bytes/${64 * 1024 * 1024}`, headers: { host: name }, agent: false },
        (res) => {
          let bytes = 0;
          res.on('data', (data: Buffer) => (bytes += data.length));
          res.on('end', () => resolve(bytes));
          res.on('error', reject);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(download).toBe(64 * 1024 * 1024);
  });

  it('answers of every size to many slow clients at once arrive intact (origin reads share a buffer)', async () => {
    const name = await balance([origins['one']!, origins['two']!]);
    const sizes = [1, 900, 16 * 1024, 60 * 1024, 70 * 1024, 300 * 1024, 2 * 1024 * 1024, 5 * 1024];
    const exchange = (size: number, slow: boolean) =>
      new Promise<boolean>((resolve, reject) => {
        const body = randomBytes(size);
        const req = request(
          { host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { host: name }, agent: false },
          (res) => {
            const parts: Buffer[] = [];
            res.on('data', (data: Buffer) => {
              parts.push(data);
              // A client that stops reading now and then: the proxy's writes to it queue up meanwhile.
              if (slow && parts.length % 4 === 0) {
                res.pause();
                setTimeout(() => res.resume(), 20);
              }
            });
            res.on('end', () => resolve(Buffer.concat(parts).equals(body)));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // (The large answers to slow clients outgrow the kernel's socket buffers: the proxy's writes queue.)
    const intact = await Promise.all([
      ...sizes.flatMap((size) => [exchange(size, true), exchange(size, false)]),
      exchange(12 * 1024 * 1024, true),
      exchange(12 * 1024 * 1024, true),
    ]);
    expect(intact).toEqual(intact.map(() => true));
  });

  it('proxies WebSocket upgrades; least_connections counts open tunnels', async () => {
    const name = await balance([origins['one']!, origins['two']!], {
      origin_steering: { policy: 'least_connections' },
    });
    // Any hostname reaches the traffic port, as DNS pointing the load balancer's name at Ledge would.
    const dispatcher = new UndiciAgent({
      connect: { lookup: (_host, _options, done) => done(null, [{ address: '127.0.0.1', family: 4 }]) },
    });
    const socket = new UndiciWebSocket(`ws://${name}:${port}/ws`, { dispatcher });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.onopen = () => socket.send('hello');
      socket.onmessage = (event: { data: unknown }) => resolve(String(event.data));
      socket.onerror = () => reject(new Error('websocket failed'));
    });
    expect(reply).toMatch(/^(one|two): hello$/);
    const tunnelOrigin = reply.split(':')[0];
    // While the tunnel is open its origin has one connection more: plain requests go to the other.
    const others = new Set<string>();
    for (let i = 0; i < 8; i++) others.add((await trafficRequest(port, name)).body);
    expect([...others]).toEqual([tunnelOrigin === 'one' ? 'two' : 'one']);
    socket.close();
    await dispatcher.close();
  });

  it('retries an idempotent request whose connection failed on another origin; a POST with a body is not retried', async () => {
    // The stopped origin is (almost surely) picked first; the other answers the retry.
    const name = await balance([
      { origin: origins['stopped']!, weight: 1 },
      { origin: origins['one']!, weight: 0.000001 },
    ]);
    const retried = await trafficRequest(port, name, '/', { agent: false });
    expect(retried.status).toBe(200);
    expect(retried.body).toBe('one');
    // Passive health: the refusing origin is passed over for 2 s of the platform's clock (PASSIVE_FAILURE_MS,
    // src/proxy/endpoints.ts), then tried again.
    for (let i = 0; i < 5; i++) expect((await trafficRequest(port, name)).body).toBe('one');
    await clock.advance(2_100);
    const posted = await trafficRequest(port, name, '/', { method: 'POST', body: 'x', agent: false });
    expect(posted.status).toBe(521);
    expect(posted.body).toMatch(/^error code: 521\n/);
  });

  it('answers 521 for a refused connection, 522 for a connect timeout, 502 for an invalid answer', async () => {
    const refused = await trafficRequest(port, await balance([origins['stopped']!]));
    expect(refused.status).toBe(521);
    expect(refused.body).toMatch(/^error code: 521\n/);
    expect(refused.body).not.toContain('127.0.0.1');

    const started = Date.now();
    const timedOut = await trafficRequest(port, await balance([rawOrigin('hole', blackhole.port)]));
    expect(timedOut.status).toBe(522);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const invalid = await trafficRequest(
      port,
      await balance([rawOrigin('garbage', (garbage.address() as AddressInfo).port)]),
    );
    expect(invalid.status).toBe(502);
  });

  it('hostile origins (silent, huge headers, slow) answer 524/502 and do not stall other traffic', async () => {
    const name = await balance([origins['one']!]);
    let silentAnswered = false;
    const silent = trafficRequest(port, name, '/silent', { agent: false }).finally(() => (silentAnswered = true));
    const huge = trafficRequest(port, name, '/huge-header', { agent: false });
    const slow = Array.from({ length: 20 }, () => trafficRequest(port, name, '/slow/1000', { agent: new Agent() }));
    // Meanwhile plain requests are answered, all before the silent origin's response timeout (1.5 s) ends it:
    // they do not wait behind it.
    for (let i = 0; i < 10; i++) expect((await trafficRequest(port, name)).status).toBe(200);
    expect(silentAnswered).toBe(false);
    expect((await huge).status).toBe(502);
    const silentAnswer = await silent;
    expect(silentAnswer.status).toBe(524);
    expect((await Promise.all(slow)).every((answer) => answer.status === 200)).toBe(true);
  });

  it("refuses to proxy to Ledge's own listeners (no loops)", async () => {
    const pool = await createPool(ledge, 'loop', [rawOrigin('self', port)]).catch((error: Error) => error.message);
    expect(String(pool)).toMatch(/egress policy/);
  });
});
