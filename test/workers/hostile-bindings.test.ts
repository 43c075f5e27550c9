import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/shared/clock.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { buildFunctionsConfig, serializeConfig } from '../../src/workerd/config/index.ts';
import { localBodies } from '../../src/workerd/isolate/local-body.ts';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';
import {
  accountSubdomain,
  api,
  callFunction,
  enableWorkersDev,
  functionsPort,
  tenant,
  uploadScript,
} from './helpers.ts';

const KiB = 1024;
const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
/** An operator-denied range that is public to workerd (TEST-NET-2), and an address in it. */
const DENIED_RANGE = '198.51.100.0/24';
const DENIED_ADDRESS = '198.51.100.7';

/**
 * What a hostile function tries. `GET /env`: the names it can see; `/params`: what the platform params module exports. `/flags?path=`: the tail-flag service
 * under its old name, wherever it can find it. `/get/<key>` and `/proto/<key>`: the binding's get, and
 * the prototype's own unpatched get. `/put`, `/mpu`: writes with a reserved metadata key. `/fetch?url=`,
 * `/connect?to=`: egress.
 */
const PROBER = `import { env as moduleEnv } from 'cloudflare:workers';
import { connect } from 'cloudflare:sockets';
import * as platformParams from './__ledge/params.js';
const reserved = (names) => names.filter((name) => /^__ledge/i.test(name));
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const q = url.searchParams;
    const [, action, key] = url.pathname.split('/');
    if (action === 'env') {
      return Response.json({
        env: Object.keys(env),
        moduleEnv: Object.keys(moduleEnv),
        hidden: reserved([...Object.getOwnPropertyNames(env), ...Object.getOwnPropertyNames(moduleEnv)]),
      });
    }
    if (action === 'params') return Response.json(Object.keys(platformParams).sort());
    if (action === 'flags') {
      const flags = moduleEnv.__LEDGE_TAIL_FLAGS ?? env.__LEDGE_TAIL_FLAGS;
      if (!flags) return new Response('unreachable');
      const answer = await flags.fetch('http://flags/' + q.get('path'));
      return new Response(await answer.text(), { status: answer.status });
    }
    if (action === 'get' || action === 'proto') {
      const get = action === 'get' ? env.BUCKET.get : Object.getPrototypeOf(env.BUCKET).get;
      const object = await get.call(env.BUCKET, key);
      if (object === null) return new Response('missing', { status: 404 });
      return new Response(object.body, { headers: { 'x-custom': JSON.stringify(object.customMetadata) } });
    }
    if (action === 'put' || action === 'mpu') {
      const customMetadata = { [q.get('meta')]: q.get('value') ?? 'ab/' + 'ab'.repeat(16) };
      try {
        if (action === 'put') await env.BUCKET.put(key, 'sneaky', { customMetadata });
        else await env.BUCKET.createMultipartUpload(key, { customMetadata });
        return new Response('stored');
      } catch (error) {
        return new Response(String(error), { status: 400 });
      }
    }
    if (action === 'fetch') {
      try {
        const answer = await fetch(q.get('url'));
        return new Response('status ' + answer.status + ': ' + (await answer.text()));
      } catch (error) {
        return new Response(String(error), { status: 502 });
      }
    }
    if (action === 'connect') {
      try {
        const socket = connect(q.get('to'));
        const writer = socket.writable.getWriter();
        await writer.write(new TextEncoder().encode('GET / HTTP/1.0\\r\\nhost: x\\r\\n\\r\\n'));
        const { value } = await socket.readable.getReader().read();
        await socket.close();
        return new Response('read: ' + new TextDecoder().decode(value).split('\\r\\n')[0]);
      } catch (error) {
        return new Response(String(error), { status: 502 });
      }
    }
    return new Response('?', { status: 404 });
  },
};`;

async function createBucket(as: TestLedge, name: string) {
  expect((await api(as, 'POST', `/accounts/${as.accountId}/r2/buckets`, { name })).status).toBe(200);
}

async function putObject(
  as: TestLedge,
  bucket: string,
  key: string,
  body: Buffer,
  headers: Record<string, string> = {},
) {
  return fetch(`${as.apiUrl}/accounts/${as.accountId}/r2/buckets/${bucket}/objects/${key}`, {
    method: 'PUT',
    headers: { ...as.tokenHeaders, ...headers },
    body,
  });
}

async function deploy(as: TestLedge, name: string, source: string, bucket?: string): Promise<string> {
  const upload = await uploadScript(as, name, {
    modules: { 'index.js': source },
    metadata: { bindings: bucket ? [{ type: 'r2_bucket', name: 'BUCKET', bucket_name: bucket }] : [] },
  });
  expect(upload.status, JSON.stringify(upload.body.errors)).toBe(200);
  expect((await enableWorkersDev(as, name)).status).toBe(200);
  return `${name}.${await accountSubdomain(as)}.localhost`;
}

/**
 * The workerd config the runtime writes for the deployed scripts (it removes its own copies once workerd
 * has read them: they hold secrets), made by the same functions with the server's own resolver and paths.
 */
async function runtimeConfig(ledge: TestLedge): Promise<string> {
  const platform = ledge.server.platform;
  const built = buildFunctionsConfig({
    scripts: await platform.functions.workers.deployedScripts(),
    r2: {
      workerdService: (account, bucket) => platform.r2Backend.workerdService(account, bucket),
      localReads: (account, bucket) => platform.r2Backend.localReads(account, bucket),
    },
    domain: 'localhost',
    maxCompatibilityDate: '2025-01-01',
    mode: 'router',
    tailFlagsDir: platform.functions.traces.flagsDir,
  });
  return serializeConfig(built.config);
}

/** The host's own non-loopback addresses (this machine: 192.0.2.2 and fd00::2 on eth0). */
function hostAddresses(): { v4?: string; v6?: string } {
  const entries = Object.values(networkInterfaces())
    .flat()
    .filter((e) => e && !e.internal);
  return {
    v4: entries.find((e) => e!.family === 'IPv4')?.address,
    v6: entries.find((e) => e!.family === 'IPv6' && !e!.address.startsWith('fe80'))?.address,
  };
}

/**
 * Hidden bindings are per script and least privilege, and functions' egress follows the operator's
 * policy (issue 26 points 3 and 6). Three accounts: A owns a bucket with a large object, B a tailed
 * script, C the hostile prober.
 */
describe('a hostile function and the platform it runs on', () => {
  let ledge: TestLedge;
  let tenantB: TestLedge;
  let tenantC: TestLedge;
  let prober: string;
  let origin: Server;
  let originPort: number;
  const logLines: string[] = [];
  const big = randomBytes(200 * KiB + 3);
  const call = (path: string) => callFunction(functionsPort(ledge), prober, path);

  beforeAll(async () => {
    origin = createServer((_req, res) => res.end('origin ok'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originPort = (origin.address() as { port: number }).port;
    ledge = await startLedge({
      flags: { functionsProcesses: 1, egressDeny: DENIED_RANGE, egressAllow: '127.0.0.1/32' },
      logger: createLogger('warn', systemClock, {}, (line) => logLines.push(line)),
    });
    tenantB = await tenant(ledge, 'Bravo');
    tenantC = await tenant(ledge, 'Charlie');
    await createBucket(ledge, 'a-data');
    expect((await putObject(ledge, 'a-data', 'big', big)).status).toBe(200);
    await deploy(tenantB, 'watched', `export default { fetch() { return new Response('b ok'); } };`);
    await createBucket(tenantC, 'c-data');
    await createBucket(tenantC, 'c-other');
    expect((await putObject(tenantC, 'c-data', 'big', big)).status).toBe(200);
    expect((await putObject(tenantC, 'c-other', 'big', big)).status).toBe(200);
    prober = await deploy(tenantC, 'prober', PROBER, 'c-data');
  });
  afterAll(async () => {
    await ledge?.close();
    origin?.close();
  });

  describe('hidden bindings (point 3)', () => {
    it("sees none of the platform's bindings, in env or in cloudflare:workers' env", async () => {
      const seen = JSON.parse((await call('/env')).text) as { env: string[]; moduleEnv: string[]; hidden: string[] };
      expect(seen.env).toEqual(['BUCKET']);
      expect(seen.moduleEnv).toEqual(['BUCKET']);
      expect(seen.hidden).toEqual([]);
    });

    it('can import the platform modules, but they export no secret: the metrics secret and egress lists stay in their modules', async () => {
      expect(JSON.parse((await call('/params')).text)).toEqual([
        'ACCOUNT_ID',
        'CACHE_KEY',
        'LATENCY_BUCKETS',
        'LOCAL_BODY_KEY',
        'LOCAL_BUCKETS',
        'SCRIPT_NAME',
        'SLOT_BUCKETS',
        'SUBREQUEST_LIMIT',
      ]);
    });

    it("cannot read another account's tail flag nor list the flag directory; each script has its own", async () => {
      const session = await api(tenantB, 'POST', `/accounts/${tenantB.accountId}/workers/scripts/watched/tails`, {});
      expect(session.status).toBe(200);
      const flags = join(ledge.dataDir, 'runtime', 'tail-flags');
      expect(existsSync(join(flags, tenantB.accountId, 'watched', 'flag'))).toBe(true);
      for (const path of [`${tenantB.accountId}/watched/flag`, `${tenantB.accountId}/watched`, tenantB.accountId, '']) {
        const got = await call(`/flags?path=${encodeURIComponent(path)}`);
        expect(got.text, path).toBe('unreachable');
      }
      // The prober's own flag service is rooted at its own directory, nowhere above it.
      const config = await runtimeConfig(ledge);
      const flagServices = [...config.matchAll(/name = "ledge-tail-flags:([^"]+)", disk = \(path = "([^"]+)"/g)];
      const own = flagServices.filter((m) => m[1] === `${tenantC.accountId}/prober`);
      expect(own.length).toBeGreaterThan(0);
      for (const m of own) expect(m[2]).toBe(join(flags, tenantC.accountId, 'prober'));
      for (const m of flagServices) expect(m[2]!.endsWith(m[1]!)).toBe(true);
      expect(config.includes(`path = "${flags}"`)).toBe(false);
    });

    it('reads bodies locally only for its own bound bucket, and the unpatched prototype get never shows a file', async () => {
      const backend = ledge.server.platform.r2Backend;
      const local = backend.localBodies;
      const patched = await call('/get/big');
      expect(patched.body.equals(big)).toBe(true);
      expect(JSON.parse(patched.headers['x-custom'] as string)).toEqual({});
      expect(backend.localBodies).toBe(local + 1);
      // The prototype's own get goes through the user's binding: the server sends the bytes, no file name.
      const proto = await call('/proto/big');
      expect(proto.body.equals(big)).toBe(true);
      expect(JSON.parse(proto.headers['x-custom'] as string)).toEqual({});
      expect(backend.localBodies).toBe(local + 1);
      // Blob disk services name one bucket's directory each: the prober's, c-data only.
      const storage = ledge.server.platform.storage;
      const text = await runtimeConfig(ledge);
      const blobServices = [...text.matchAll(/name = "ledge-blobs:([^"]+)", disk = \(path = "([^"]+)"/g)];
      expect(blobServices.map((m) => m[1])).toContain(`${tenantC.accountId}/c-data`);
      expect(blobServices.map((m) => m[1])).not.toContain(`${tenantC.accountId}/c-other`);
      for (const m of blobServices) {
        const [account, bucket] = m[1]!.split('/') as [string, string];
        expect(m[2]).toBe(storage.bucketBlobDirectory(account, bucket));
      }
      // c-other's blob is in its own directory, which no service of the prober's names.
      const other = storage.bucketBlobDirectory(tenantC.accountId, 'c-other')!;
      expect(readdirSync(other).length).toBeGreaterThan(0);
      expect(text.includes(`path = "${other}"`)).toBe(false);
    });

    it("answers with a file name only the platform's binding, whose key is per account", async () => {
      const backend = ledge.server.platform.r2Backend;
      const headersOf = (service: { injectRequestHeaders: { name: string; value: string }[] }) =>
        Object.fromEntries(service.injectRequestHeaders.map((h) => [h.name, h.value]));
      const user = headersOf(backend.workerdService(tenantC.accountId, 'c-data'));
      const local = headersOf(backend.localReads(tenantC.accountId, 'c-data')!.service);
      const localOfA = headersOf(backend.localReads(ledge.accountId, 'a-data')!.service);
      const keyHeader = Object.keys(local).find((name) => !(name in user))!;
      expect(local[keyHeader]).not.toBe(localOfA[keyHeader]);
      const get = JSON.stringify({ version: 1, method: 'get', object: 'big' });
      const socketPath = backend.socketPath;
      const wire = (headers: Record<string, string>) =>
        new Promise<{ status: number; json: { customFields?: { k: string; v: string }[] }; bytes: number }>(
          (resolve, reject) => {
            const req = httpRequest({ socketPath, path: '/', headers: { ...headers, 'cf-r2-request': get } }, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                const all = Buffer.concat(chunks);
                const size = Number(res.headers['cf-r2-metadata-size'] ?? 0);
                resolve({
                  status: res.statusCode!,
                  json: size > 0 ? JSON.parse(all.subarray(0, size).toString()) : {},
                  bytes: all.length - size,
                });
              });
            });
            req.on('error', reject);
            req.end();
          },
        );
      const plain = await wire(user);
      expect(plain.status).toBe(200);
      expect(plain.bytes).toBe(big.length);
      expect(plain.json.customFields).toEqual([]);
      const named = await wire(local);
      expect(named.status).toBe(200);
      expect(named.bytes).toBe(0);
      expect(named.json.customFields).toHaveLength(1);
      expect(named.json.customFields![0]!.k).toBe('__ledge_local_body');
      expect(named.json.customFields![0]!.v).toMatch(/^([0-9a-f]{2})\/\1[0-9a-f]{30}$/);
      // Another account's key, or a forged one, on this account's bucket: refused outright.
      expect((await wire({ ...user, [keyHeader]: localOfA[keyHeader]! })).status).toBe(403);
      expect((await wire({ ...user, [keyHeader]: `${local[keyHeader]!.slice(1)}x` })).status).toBe(403);
    });

    it('refuses the reserved metadata key on every write door, in any case', async () => {
      for (const meta of ['__ledge_local_body', '__LEDGE_Local_Body', '__ledgefoo']) {
        const put = await call(`/put/sneaky?meta=${meta}`);
        expect(put.status, meta).toBe(400);
        expect(put.text).toMatch(/reserved/);
        const mpu = await call(`/mpu/sneaky?meta=${meta}`);
        expect(mpu.status, meta).toBe(400);
        expect(mpu.text).toMatch(/reserved/);
      }
      const v4 = await putObject(tenantC, 'c-data', 'sneaky', Buffer.from('x'), {
        'x-amz-meta-__ledge_local_body': `ab/${'ab'.repeat(16)}`,
      });
      expect(v4.status).toBe(400);
      const envelope = (await v4.json()) as { errors: { code: number; message: string }[] };
      expect(envelope.errors[0]!.code).toBe(10040);
      expect(envelope.errors[0]!.message).toMatch(/reserved/);
      expect((await call('/get/sneaky')).status).toBe(404);
      // Non-reserved look-alikes are ordinary metadata.
      expect((await call('/put/fine?meta=ledge_local_body')).text).toBe('stored');
    });

    it('never lets a stored reserved key (written before the rule) redirect a read', async () => {
      // An object stored with the key before it was reserved, naming another bucket's blob file.
      const storage = ledge.server.platform.storage;
      const bucket = (await storage.getBucket(tenantC.accountId, 'c-data'))!;
      const otherBucket = (await storage.getBucket(tenantC.accountId, 'c-other'))!;
      const otherBlob = (await storage.objects.head(otherBucket, 'big'))!.segments[0]!.blobId.split('/').at(-1)!;
      const mine = randomBytes(150 * KiB);
      expect((await putObject(tenantC, 'c-data', 'legacy', mine)).status).toBe(200);
      const changed = await ledge.server.platform.db.run(
        'UPDATE r2_objects SET custom_metadata = ? WHERE bucket_id = ? AND key = ?',
        [
          JSON.stringify({ __ledge_local_body: `${otherBlob.slice(0, 2)}/${otherBlob}`, owner: 'c' }),
          bucket.id,
          'legacy',
        ],
      );
      expect(changed.changes).toBe(1);
      for (const path of ['/get/legacy', '/proto/legacy']) {
        const got = await call(path);
        expect(got.status, path).toBe(200);
        expect(md5(got.body), path).toBe(md5(mine));
        expect(JSON.parse(got.headers['x-custom'] as string), path).toEqual({ owner: 'c' });
      }
    });

    it('refuses binding, secret and module names in the reserved namespace with a clear 400', async () => {
      const expectReserved = (result: { status: number; body: { errors: { code: number; message: string }[] } }) => {
        expect(result.status).toBe(400);
        expect(result.body.errors[0]!.code).toBe(10021);
        expect(result.body.errors[0]!.message).toMatch(/reserved/);
      };
      for (const name of ['__LEDGE_TAIL_FLAGS', '__ledge_blobs_0', '__Ledge']) {
        expectReserved(
          await uploadScript(tenantC, 'named', {
            metadata: { bindings: [{ type: 'plain_text', name, text: 'x' }] },
          }),
        );
        expectReserved(
          await uploadScript(tenantC, 'named', {
            metadata: { bindings: [{ type: 'secret_text', name, text: 'x' }] },
          }),
        );
      }
      expectReserved(
        await uploadScript(tenantC, 'named', {
          modules: {
            'index.js': 'import "./__ledge_r2.js"; export default { fetch() { return new Response("x"); } };',
            '__ledge_r2.js': 'export const x = 1;',
          },
          mainModule: 'index.js',
        }),
      );
      const base = `/accounts/${tenantC.accountId}/workers/scripts/prober`;
      expectReserved(
        await api(tenantC, 'PUT', `${base}/secrets`, { name: '__LEDGE_R2_0', text: 'x', type: 'secret_text' }),
      );
      expectReserved(
        await api(tenantC, 'PATCH', `${base}/secrets-bulk`, {
          secrets: { __ledge_x: { name: '__ledge_x', type: 'secret_text', text: 'x' } },
        }),
      );
      expect((await api(tenantC, 'GET', `${base}/secrets`)).body.result).toEqual([]);
    });
  });

  describe('egress (point 6)', () => {
    it('refuses fetch() to a denied range, the host own addresses and link-local, with a clear error', async () => {
      const { v4, v6 } = hostAddresses();
      const targets = [
        [`http://${DENIED_ADDRESS}/`, `denied by ${DENIED_RANGE}`],
        ['http://169.254.169.254/latest/meta-data/', 'denied by 169.254.0.0/16'],
        ['http://[fe80::1]/', 'denied by fe80::/10'],
        [`http://127.0.0.2:${originPort}/`, 'denied by 127.0.0.0/8'],
        [`http://localhost:${originPort}/`, 'denied by'],
        ...(v4 ? [[`http://${v4}:${ledge.port}/`, `denied by ${v4}/32`]] : []),
        ...(v6 ? [[`http://[${v6}]:${ledge.port}/`, `denied by ${v6}/128`]] : []),
      ];
      for (const [url, why] of targets) {
        const got = await call(`/fetch?url=${encodeURIComponent(url!)}`);
        expect(got.status, url).toBe(502);
        expect(got.text, url).toContain('is refused: the egress policy of this server does not let functions reach');
        expect(got.text, url).toContain(why);
      }
    });

    it('refuses connect() to the same addresses at once (workerd says it cannot connect; its log says why)', async () => {
      const { v4, v6 } = hostAddresses();
      const targets = [
        `${DENIED_ADDRESS}:80`,
        '169.254.169.254:80',
        // 0.0.0.0 reaches a loopback listener on Linux: the origin itself, refused by policy not by a closed port.
        `0.0.0.0:${originPort}`,
        ...(v4 ? [`${v4}:${ledge.port}`] : []),
        ...(v6 ? [`[${v6}]:${ledge.port}`] : []),
      ];
      for (const to of targets) {
        const started = Date.now();
        const got = await call(`/connect?to=${encodeURIComponent(to)}`);
        expect(got.status, to).toBe(502);
        // workerd's own words, the same as for a closed port: JavaScript cannot wrap cloudflare:sockets.
        expect(got.text, to).toContain('cannot connect to the specified address');
        // Refused before any packet leaves, not after a connect timeout to an unrouted address (the kernel gives
        // up on an unanswered SYN after about two minutes): a ceiling far below that, which no busy machine reaches.
        expect(Date.now() - started, to).toBeLessThan(20_000);
      }
      // workerd logs the first refusal of a process (and only that one) with the address.
      await expect
        .poll(() => logLines.some((line) => line.includes(`connecting to ${DENIED_ADDRESS}:80 is not allowed`)), {
          timeout: 30_000,
        })
        .toBe(true);
    });

    it('lets fetch() and connect() reach an address the operator allows', async () => {
      const fetched = await call(`/fetch?url=${encodeURIComponent(`http://127.0.0.1:${originPort}/`)}`);
      expect(fetched.text).toBe('status 200: origin ok');
      const connected = await call(`/connect?to=${encodeURIComponent(`127.0.0.1:${originPort}`)}`);
      expect(connected.text).toBe('read: HTTP/1.1 200 OK');
    });
  });
});

/**
 * The local body module itself (isolate/local-body.ts, which workerd runs), fed crafted answers: only a blob
 * file name in its own shard (`<2 hex>/<the 32-hex id starting with them>`) is ever opened; anything else gets
 * the body from the server. Run in Node with workerd's objects stood in for (the module env passed in).
 */
describe('the local body shim', () => {
  const KEY = '__ledge_local_body';
  const load = (platformEnv: Record<string, unknown>) =>
    localBodies(platformEnv, KEY, { BUCKET: 0 }) as (env: object) => void;

  it('opens only well-formed blob file names and strips the key either way', async () => {
    const valid = `ab/ab${'0'.repeat(30)}`;
    const crafted = [
      '../../../../etc/passwd',
      `ab/../${'ab'.repeat(16)}`,
      `cd/ab${'0'.repeat(30)}`,
      `AB/AB${'0'.repeat(30)}`,
      `ab/ab${'0'.repeat(30)}/x`,
      `/ab/ab${'0'.repeat(30)}`,
      `ab/ab${'0'.repeat(29)}`,
      42,
    ];
    for (const path of [...crafted, valid]) {
      const opened: string[] = [];
      const platformEnv: Record<string, unknown> = {
        __LEDGE_R2_0: {
          get: async (_key: string, options?: { range?: unknown }) =>
            options?.range
              ? { body: 'from the server', customMetadata: {} }
              : { body: null, customMetadata: { [KEY]: path, owner: 'x' } },
        },
        __LEDGE_BLOBS_0: {
          fetch: async (url: string) => {
            opened.push(url);
            return new Response('from the file');
          },
        },
      };
      const withLocalBodies = load(platformEnv);
      // Taken out of env before any user code could see them.
      expect(Object.keys(platformEnv)).toEqual([]);
      const env = { BUCKET: {} as { get?: (key: string) => Promise<{ body: unknown; customMetadata: object }> } };
      withLocalBodies(env);
      const object = await env.BUCKET.get!('k');
      if (path === valid) {
        expect(opened).toEqual([`http://blobs/${valid}`]);
        expect(await new Response(object.body as ReadableStream).text()).toBe('from the file');
        expect(object.customMetadata).toEqual({ owner: 'x' });
      } else {
        expect(opened, String(path)).toEqual([]);
        expect(object.body, String(path)).toBe('from the server');
      }
    }
  });
});
