import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';
import { poll } from './wait.ts';

const run = promisify(execFile);

/** Debian 12's OpenStack Swift (`.ci/apt-packages`: swift swift-proxy swift-object swift-container swift-account). */
const SERVERS = ['account', 'container', 'object', 'proxy'] as const;
type ServerName = (typeof SERVERS)[number];
const binary = (name: ServerName) => `/usr/bin/swift-${name}-server`;

export interface S3Server {
  /** http://127.0.0.1:<port> of Swift's proxy, which speaks S3 through its s3api middleware. */
  endpoint: string;
  region: string;
  /** tempauth's S3 access key is `<account>:<user>`. */
  accessKeyId: string;
  secretAccessKey: string;
  /** Swift serves buckets as paths only. */
  forcePathStyle: true;
  stop(): Promise<void>;
}

/**
 * Starts a throwaway OpenStack Swift "all in one" (proxy with s3api + tempauth, and one account, container
 * and object server) on 127.0.0.1, all state in a fresh temp dir, and returns S3 settings for it. Each
 * server runs as one process (`workers = 0`) that this process started, so `stop` ends exactly those
 * PIDs. No replicator, updater or auditor runs: listings are updated synchronously, which a test needs.
 */
export async function startS3Server(): Promise<S3Server> {
  for (const name of SERVERS) {
    if (!existsSync(binary(name))) {
      throw new Error(
        `${binary(name)} is missing: apt-get install --no-install-recommends swift swift-proxy swift-object swift-container swift-account python3-swift`,
      );
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'ledge-swift-'));
  const processes: ChildProcess[] = [];
  try {
    const ports = {
      proxy: await freePort(),
      object: await freePort(),
      container: await freePort(),
      account: await freePort(),
    };
    const secret = randomBytes(16).toString('hex');
    writeSwiftConfig(dir, ports, secret);
    await buildRings(dir, ports);
    // Backends first, the proxy last: it is what the readiness check asks.
    for (const name of SERVERS) processes.push(startProcess(dir, name));
    await waitUntilReady(dir, ports, processes);
    return {
      endpoint: `http://127.0.0.1:${ports.proxy}`,
      region: 'us-east-1',
      accessKeyId: 'test:tester',
      secretAccessKey: secret,
      forcePathStyle: true,
      stop: async () => {
        await stopProcesses(processes);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopProcesses(processes);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

type Ports = Record<ServerName, number>;

function writeSwiftConfig(dir: string, ports: Ports, secret: string): void {
  mkdirSync(join(dir, 'node', 'd1'), { recursive: true });
  mkdirSync(join(dir, 'log'));
  const hex = () => randomBytes(8).toString('hex');
  writeFileSync(
    join(dir, 'swift.conf'),
    `[swift-hash]\nswift_hash_path_suffix = ${hex()}\nswift_hash_path_prefix = ${hex()}\n\n` +
      `[storage-policy:0]\nname = Policy-0\ndefault = yes\n`,
  );
  // Shared by the four servers. node_timeout is generous because nothing retries a container update
  // that timed out under load (no updater daemon): the listing would stay stale.
  const common = (name: ServerName) =>
    [
      '[DEFAULT]',
      'bind_ip = 127.0.0.1',
      `bind_port = ${ports[name]}`,
      'workers = 0',
      `user = ${userInfo().username}`,
      `swift_dir = ${dir}`,
      `devices = ${join(dir, 'node')}`,
      'mount_check = false',
      'disable_fallocate = true',
      `log_name = ${name}-server`,
      'node_timeout = 20',
      'conn_timeout = 5',
      '',
      '[pipeline:main]',
      `pipeline = ${name === 'proxy' ? PROXY_PIPELINE : `${name}-server`}`,
      '',
    ].join('\n');
  // The object server answers a PUT or DELETE only once the container listing has it.
  writeFileSync(
    join(dir, 'object-server.conf'),
    `${common('object')}[app:object-server]\nuse = egg:swift#object\ncontainer_update_timeout = 20\n`,
  );
  writeFileSync(
    join(dir, 'container-server.conf'),
    `${common('container')}[app:container-server]\nuse = egg:swift#container\n`,
  );
  writeFileSync(
    join(dir, 'account-server.conf'),
    `${common('account')}[app:account-server]\nuse = egg:swift#account\n`,
  );
  writeFileSync(join(dir, 'proxy-server.conf'), `${common('proxy')}${proxyApps(secret)}`);
}

const PROXY_PIPELINE =
  'catch_errors gatekeeper healthcheck proxy-logging cache listing_formats bulk s3api tempauth copy slo dlo proxy-logging proxy-server';

/**
 * s3api turns S3 requests into Swift ones (multipart uploads become SLOs, hence slo); tempauth holds the
 * one user, whose S3 key is `test:tester`. tempauth insists on a memcache middleware: it points at port 1,
 * where nothing listens, so two test servers never share a cache (S3 auth works without one).
 */
function proxyApps(secret: string): string {
  const filters = [
    'catch_errors',
    'gatekeeper',
    'healthcheck',
    'proxy-logging',
    'listing_formats',
    'bulk',
    'copy',
    'slo',
    'dlo',
  ];
  return [
    '[app:proxy-server]',
    'use = egg:swift#proxy',
    'account_autocreate = true',
    'allow_account_management = true',
    '',
    '[filter:s3api]',
    'use = egg:swift#s3api',
    'location = us-east-1',
    's3_acl = false',
    'allow_multipart_uploads = true',
    'min_segment_size = 5242880',
    'dns_compliant_bucket_names = true',
    '',
    '[filter:tempauth]',
    'use = egg:swift#tempauth',
    `user_test_tester = ${secret} .admin`,
    '',
    '[filter:cache]',
    'use = egg:swift#memcache',
    'memcache_servers = 127.0.0.1:1',
    '',
    ...filters.map((name) => `[filter:${name}]\nuse = egg:swift#${name.replace('-', '_')}\n`),
  ].join('\n');
}

/**
 * One device, one replica, 2^8 partitions per ring, built with Swift's own RingBuilder in one Python
 * process (swift-ring-builder costs ~0.6 s per call and would take nine). Swift keeps object metadata in
 * user xattrs, so the same script first checks that the temp dir's filesystem has them.
 */
async function buildRings(dir: string, ports: Ports): Promise<void> {
  const script = `
import os, sys
from swift.common.ring import RingBuilder
etc, device = sys.argv[1], os.path.join(sys.argv[1], "node", "d1")
probe = os.path.join(device, ".xattr-probe")
open(probe, "w").close()
try:
    os.setxattr(probe, "user.probe", b"1")
except OSError as error:
    sys.exit("the filesystem of %s has no user xattrs, which Swift needs: %s" % (etc, error))
os.remove(probe)
for name, port in zip(("object", "container", "account"), sys.argv[2:5]):
    builder = RingBuilder(8, 1, 0)
    builder.add_dev({"region": 1, "zone": 1, "ip": "127.0.0.1", "port": int(port), "device": "d1", "weight": 1.0})
    builder.rebalance()
    builder.get_ring().save(os.path.join(etc, name + ".ring.gz"))
`;
  await run('/usr/bin/python3', [
    '-c',
    script,
    dir,
    String(ports.object),
    String(ports.container),
    String(ports.account),
  ]);
}

function startProcess(dir: string, name: ServerName): ChildProcess {
  const log = openSync(join(dir, 'log', `${name}.log`), 'a');
  try {
    return spawn(binary(name), [join(dir, `${name}-server.conf`), '-v'], { stdio: ['ignore', log, log] });
  } finally {
    closeSync(log);
  }
}

/** Every backend port accepts connections and the proxy's /healthcheck answers 200, within 30 s. */
async function waitUntilReady(dir: string, ports: Ports, processes: ChildProcess[]): Promise<void> {
  const ready = await poll(
    async () => {
      const exited = processes.find((child) => child.exitCode !== null || child.signalCode !== null);
      if (exited) throw new Error(`a Swift server exited at start (${String(exited.spawnfile)})\n${logs(dir)}`);
      const backends = await Promise.all([ports.object, ports.container, ports.account].map(accepts));
      if (!backends.every(Boolean)) return false;
      const health = await fetch(`http://127.0.0.1:${ports.proxy}/healthcheck`).catch(() => undefined);
      return health?.status === 200;
    },
    { timeoutMs: 30_000, everyMs: 100 },
  );
  if (!ready) throw new Error(`Swift was not ready after 30 s\n${logs(dir)}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function logs(dir: string): string {
  return SERVERS.map((name) => {
    const path = join(dir, 'log', `${name}.log`);
    return `== ${name}\n${existsSync(path) ? readFileSync(path, 'utf8').slice(-1500) : ''}`;
  }).join('\n');
}

/**
 * SIGTERM to each process this helper started (by its PID), newest first so the proxy goes before the
 * servers behind it; SIGKILL after 15 s. A process that already exited is skipped.
 */
async function stopProcesses(processes: ChildProcess[]): Promise<void> {
  for (const child of [...processes].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid, 'SIGTERM');
    const timer = setTimeout(() => {
      // Still ours: its exit was not reported, so the PID was not reused.
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, 15_000);
    await exited;
    clearTimeout(timer);
  }
}
