import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCidr } from '../../egress/index.ts';
import { EGRESS_BINDING, METRICS_SECRET_BINDING, TAIL_FLAG_BINDING } from '../isolate/contract.ts';
import type { Binding, ScriptToRun } from '../script.ts';
import { workerdBinary } from '../workerd-process.ts';
import { BINDING_KINDS, PLATFORM_BINDINGS, type ScriptContext } from './bindings/index.ts';
import { localReads } from './bindings/local-reads.ts';
import { tailFlags } from './bindings/tail-flags.ts';
import { buildFrontConfig, buildFunctionsConfig, serializeConfig, writeConfig } from './index.ts';
import type { FunctionsConfigInput, R2ServiceResolver } from './input.ts';
import { Embed, Enumerant, VOID, type Config } from './types.ts';

const work = mkdtempSync(join(tmpdir(), 'ledge-config-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const base64 = (text: string) => Buffer.from(text).toString('base64');

function script(name: string, bindings: Binding[], options: { workersDev?: boolean } = {}): ScriptToRun {
  return {
    script: { account_id: 'acct', name, workers_dev: options.workersDev ?? true },
    version: {
      id: 'v1',
      main_module: 'index.js',
      modules: [
        {
          name: 'index.js',
          type: 'esModule',
          content: base64('export default { fetch() { return new Response("ok"); } };'),
        },
        { name: 'words.txt', type: 'text', content: base64('hello') },
      ],
      bindings,
      compatibility_date: '2024-01-01',
      compatibility_flags: [],
      cpu_ms: null,
    },
    secrets: [
      { name: 'API_KEY', text: 'k"\n' },
      { name: 'BUCKET', text: 'shadowed by the binding' },
    ],
    subdomain: 'sub',
    scheduled: false,
  };
}

const r2: R2ServiceResolver = {
  workerdService: (account, bucket) => ({
    address: 'unix:/run/r2.sock',
    injectRequestHeaders: [{ name: 'x-ledge-bucket', value: `${account}/${bucket}` }],
  }),
  localReads: (account, bucket) =>
    bucket === 'local'
      ? {
          directory: `/data/blobs/${account}/${bucket}`,
          service: { address: 'unix:/run/r2.sock', injectRequestHeaders: [{ name: 'x-ledge-local', value: 'key' }] },
          metadataKey: '__ledge_file',
          cacheableKey: '__ledge_cache',
        }
      : undefined,
};

const BINDINGS: Binding[] = [
  { type: 'r2_bucket', name: 'BUCKET', bucket_name: 'local' },
  { type: 'r2_bucket', name: 'SAME', bucket_name: 'local' },
  { type: 'r2_bucket', name: 'REMOTE', bucket_name: 'remote' },
  { type: 'plain_text', name: 'GREETING', text: 'hi' },
  { type: 'json', name: 'SETTINGS', json: { a: [1] } },
];

function context(deployed: ScriptToRun, tailFlagsDir = join(work, 'flags')): ScriptContext {
  return { deployed, r2, tailFlagsDir, metricsSecret: 'secret', egressRules: null };
}

function input(overrides: Partial<FunctionsConfigInput> = {}): FunctionsConfigInput {
  return {
    scripts: [script('app', BINDINGS)],
    r2,
    domain: 'Example.com',
    maxCompatibilityDate: '2025-01-01',
    mode: 'router',
    tailFlagsDir: join(work, 'flags'),
    ping: true,
    ...overrides,
  };
}

/** `workerd compile --config-only`: workerd parses the text against its schema and embeds what it names. */
function workerdCompiles(configPath: string): { status: number | null; stderr: string } {
  const result = spawnSync(workerdBinary(), ['compile', '--config-only', configPath], { encoding: 'buffer' });
  return { status: result.status, stderr: result.stderr.toString() };
}

describe('binding modules', () => {
  const deployed = script('app', BINDINGS);

  it('r2_bucket: an r2Bucket binding on the bucket’s external service with the resolver’s headers', () => {
    const out = BINDING_KINDS.r2_bucket({ type: 'r2_bucket', name: 'B', bucket_name: 'remote' }, context(deployed));
    expect(out.bindings).toEqual([{ name: 'B', r2Bucket: 'r2:acct/remote' }]);
    expect(out.services).toEqual([
      {
        name: 'r2:acct/remote',
        external: {
          address: 'unix:/run/r2.sock',
          http: { injectRequestHeaders: [{ name: 'x-ledge-bucket', value: 'acct/remote' }] },
        },
      },
    ]);
  });

  it('plain_text and json: text and JSON text bindings', () => {
    expect(BINDING_KINDS.plain_text({ type: 'plain_text', name: 'T', text: 'x' }, context(deployed)).bindings).toEqual([
      { name: 'T', text: 'x' },
    ]);
    expect(BINDING_KINDS.json({ type: 'json', name: 'J', json: { a: 1 } }, context(deployed)).bindings).toEqual([
      { name: 'J', json: '{"a":1}' },
    ]);
  });

  it('tail flags: a read-only disk service on the script’s own flag directory, which the runtime is to make', () => {
    const out = tailFlags(context(deployed, '/flags'));
    expect(out.bindings).toEqual([{ name: TAIL_FLAG_BINDING, service: 'ledge-tail-flags:acct/app' }]);
    expect(out.services).toEqual([
      { name: 'ledge-tail-flags:acct/app', disk: { path: '/flags/acct/app', writable: false } },
    ]);
    expect(out.directories).toEqual(['/flags/acct/app']);
  });

  it('local reads: one slot per bucket whose blobs are files here, and the params that name it', () => {
    const out = localReads(context(deployed));
    expect(out.bindings.map((b) => b.name)).toEqual(['__LEDGE_R2_0', '__LEDGE_BLOBS_0']);
    expect(out.services!.map((s) => s.name)).toEqual(['ledge-r2-local:acct/local', 'ledge-blobs:acct/local']);
    expect(out.services![1]).toEqual({
      name: 'ledge-blobs:acct/local',
      disk: { path: '/data/blobs/acct/local', writable: false },
    });
    expect(out.params).toEqual({
      localBuckets: { BUCKET: 0, SAME: 0 },
      localBodyKey: '__ledge_file',
      localCache: { metadataKey: '__ledge_cache', buckets: { 0: 'acct/local' } },
    });
  });

  it('the platform’s bindings come in order: tail flags, local reads, the metrics secret, egress', () => {
    const names = PLATFORM_BINDINGS.flatMap((module) =>
      module({ ...context(deployed), egressRules: { allow: [], deny: [] } }).bindings.map((binding) => binding.name),
    );
    expect(names).toEqual([
      TAIL_FLAG_BINDING,
      '__LEDGE_R2_0',
      '__LEDGE_BLOBS_0',
      METRICS_SECRET_BINDING,
      EGRESS_BINDING,
    ]);
  });
});

describe('building a config', () => {
  it('makes nothing on disk: the directories and files come back with the value', () => {
    const flags = join(work, 'not-yet', 'flags');
    const built = buildFunctionsConfig(input({ tailFlagsDir: flags }));
    expect(existsSync(join(work, 'not-yet'))).toBe(false);
    expect(built.directories).toEqual([join(flags, 'acct', 'app')]);
    expect(built.files.map((f) => f.path)).toContain('s0/index.js');
    expect(built.files.map((f) => f.path)).toContain('__ledge/contract.js');
  });

  it('binds the user’s bindings, then the platform’s, then the secrets no binding shadows', () => {
    const built = buildFunctionsConfig(
      input({ metricsSecret: 'm', egress: { allow: [], deny: [parseCidr('198.51.100.0/24')] } }),
    );
    const worker = built.config.services!.find((s) => s.name === 'acct/app')!;
    if (!('worker' in worker)) throw new Error('not a worker');
    expect(worker.worker.bindings!.map((b) => b.name)).toEqual([
      'BUCKET',
      'SAME',
      'REMOTE',
      'GREETING',
      'SETTINGS',
      TAIL_FLAG_BINDING,
      '__LEDGE_R2_0',
      '__LEDGE_BLOBS_0',
      METRICS_SECRET_BINDING,
      EGRESS_BINDING,
      'API_KEY',
    ]);
    expect(worker.worker.compatibilityFlags).toEqual(['nodejs_als']);
    // One service per bucket, however many bindings name it; the functions network when egress is set.
    const names = built.config.services!.map((s) => s.name);
    expect(names.filter((n) => n === 'r2:acct/local')).toHaveLength(1);
    expect(names).toContain('internet');
    expect(serializeConfig(built.config)).toContain('(name = "SECRET", text = "m")');
  });

  it('puts the router in front of several scripts and hands the socket to a lone routed one', () => {
    const several = buildFunctionsConfig(input({ scripts: [script('a', []), script('b', [])] }));
    expect(several.config.sockets![0]).toMatchObject({ name: 'http', service: 'ledge-router' });
    const alone = buildFunctionsConfig(input({ scripts: [script('a', []), script('b', [], { workersDev: false })] }));
    expect(alone.config.sockets![0]).toMatchObject({ name: 'http', service: 'acct/a' });
  });

  it('writes what was built (0600 files, the directories made) and workerd accepts it', () => {
    const flags = join(work, 'written-flags');
    const dir = join(work, 'functions');
    const path = writeConfig(
      dir,
      buildFunctionsConfig(input({ tailFlagsDir: flags, egress: { allow: [], deny: [] } })),
    );
    expect(statSync(join(flags, 'acct', 'app')).isDirectory()).toBe(true);
    expect(statSync(join(dir, 's0', 'index.js')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 's0', 'words.txt'), 'utf8')).toBe('hello');
    expect(workerdCompiles(path)).toMatchObject({ status: 0 });
    const front = writeConfig(
      join(work, 'front'),
      buildFrontConfig({
        domain: 'example.com',
        slots: [{ index: 2, address: 'unix:/run/slot-2.sock' }],
        routesDir: work,
      }),
    );
    expect(workerdCompiles(front)).toMatchObject({ status: 0 });
  });

  it('every record kind of types.ts is one workerd’s schema accepts', () => {
    const config: Config = {
      services: [
        {
          name: 'w',
          worker: {
            modules: [
              { name: 'm.js', esModule: new Embed('m.js') },
              { name: 'd.bin', data: new Uint8Array([1, 2]) },
              { name: 'c.js', commonJsModule: 'module.exports = 1;' },
              { name: 'j.json', json: '{}' },
            ],
            compatibilityDate: '2025-01-01',
            bindings: [
              { name: 'T', text: 't' },
              { name: 'D', data: new Uint8Array([0]) },
              { name: 'K', kvNamespace: { name: 'kv', props: { json: '{}' } } },
              { name: 'Q', queue: 'q' },
              { name: 'O', durableObjectNamespace: { className: 'C' } },
              { name: 'U', unsafeEval: VOID },
              { name: 'W', wrapped: { moduleName: 'm.js', innerBindings: [{ name: 'I', json: '1' }] } },
              { name: 'M', memoryCache: { id: 'c', limits: { maxKeys: 10 } } },
            ],
            durableObjectNamespaces: [{ className: 'C', uniqueKey: 'k', enableSql: true }],
            durableObjectStorage: { inMemory: VOID },
          },
        },
        { name: 'a', assets: { path: '/assets', config: '{}', userWorker: 'w', compatibilityDate: '2025-01-01' } },
        { name: 'b', bucket: { path: '/bucket' } },
        {
          name: 'e',
          external: { address: 'example.com:443', https: { tlsOptions: { minVersion: new Enumerant('tls1Dot2') } } },
        },
        { name: 'internet', network: { allow: ['public'], deny: ['10.0.0.0/8'] } },
      ],
      sockets: [
        { name: 'h', address: '127.0.0.1:0', http: { style: new Enumerant('proxy') }, service: 'w' },
        {
          name: 's',
          address: '127.0.0.1:0',
          https: { tlsOptions: { keypair: { privateKey: 'k', certificateChain: 'c' } } },
          service: 'w',
        },
      ],
      v8Flags: ['--a'],
      cluster: { address: '127.0.0.1:0', stopTimeoutMs: 10 },
    };
    const path = writeConfig(join(work, 'every-kind'), {
      config,
      files: [{ path: 'm.js', content: 'export default {};' }],
      directories: [],
    });
    expect(workerdCompiles(path)).toMatchObject({ status: 0, stderr: '' });
  });

  it('workerd refuses a field its schema lacks (the check above can fail)', () => {
    const config = { services: [{ name: 'd', disk: { path: '/x', bogus: true } }] } as unknown as Config;
    const path = writeConfig(join(work, 'bogus'), { config, files: [], directories: [] });
    const result = workerdCompiles(path);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("no field named 'bogus'");
  });
});
