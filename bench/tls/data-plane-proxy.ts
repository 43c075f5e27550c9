// Ledge's data plane alone: the proxy engine (src/proxy/: ProxyServer, its TLS termination, raw client and
// origin connections) with a router that always answers the same origin, in a process of its own. Beside
// the node:tls proxy floor and the whole of Ledge (`npm run bench:https` runs it as `data-plane`), it
// splits what Ledge spends over the floor into the engine's share and the rest's (the load balancer's routing:
// route cache, health snapshots, steering; and the Workers routes and public-bucket claims before it).
// LEDGE_BENCH_DATA_PLANE=polluted first runs the rest of a server's kinds of I/O through Node's internals
// (pollute.ts), as a Ledge process has; `worker` does that, then serves from a worker thread (an isolate of
// its own, whose copy of Node's internals saw only the data plane).
// A second listener serves the same without TLS (the plain load balancer's engine).
// Usage (by the bench): node bench/tls/data-plane-proxy.ts <certificate.pem> <key.pem> <origin port>;
// prints its TLS port and its plain port.
import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { EgressPolicy, parseCidr } from '../../src/egress/index.ts';
import { DEFAULT_TRAFFIC_SETTINGS } from '../../src/load-balancing/traffic/index.ts';
import { Endpoint, ProxyServer, type ProxyRoute, type TlsChoice } from '../../src/proxy/index.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../src/shared/http-timeouts.ts';
import { createLogger } from '../../src/shared/logger.ts';

const [certificateFile, keyFile, originPort] = process.argv.slice(2);
const mode = process.env['LEDGE_BENCH_DATA_PLANE'] ?? 'alone';
if (isMainThread && mode !== 'alone') await (await import('./pollute.ts')).polluteNodeInternals();
if (isMainThread && mode === 'worker') {
  const worker = new Worker(new URL(import.meta.url), { argv: process.argv.slice(2) });
  worker.once('message', (ports: string) => console.log(ports));
  process.on('SIGTERM', () => process.exit(0));
} else await serve();

async function serve(): Promise<void> {
  const egress = new EgressPolicy({ allow: [parseCidr('127.0.0.1/32')] }, systemClock);
  const endpoint = new Endpoint(
    '127.0.0.1',
    Number(originPort),
    DEFAULT_TRAFFIC_SETTINGS.idleTimeoutMs,
    egress,
    systemClock,
  );
  const target = { endpoint };
  const route: ProxyRoute = {
    target,
    hostFor: () => undefined,
    retryTarget: () => undefined,
    retryCookie: () => undefined,
    answered: () => {},
  };
  const choice: TlsChoice = {
    kind: 'site',
    minVersion: 'TLSv1.2',
    credentials: { cert: readFileSync(certificateFile!, 'utf8'), key: readFileSync(keyFile!, 'utf8') },
  };
  const listener = (tls: boolean) =>
    new ProxyServer({
      host: '127.0.0.1',
      port: 0,
      route: () => route,
      egress,
      // The load balancer's own bounds, as Ledge runs them by default.
      settings: DEFAULT_TRAFFIC_SETTINGS,
      httpTimeouts: DEFAULT_HTTP_TIMEOUTS,
      logger: createLogger('warn', systemClock),
      portSetting: { flag: '--port', env: 'PORT' },
      what: 'data plane bench',
      clock: systemClock,
      ...(tls ? { tls: { choose: () => choice } } : {}),
    });
  const [secure, plain] = [listener(true), listener(false)];
  await secure.start();
  await plain.start();
  const ports = `${secure.port} ${plain.port}`;
  if (isMainThread) console.log(ports);
  else parentPort!.postMessage(ports);
  process.on('SIGTERM', () => process.exit(0));
}
