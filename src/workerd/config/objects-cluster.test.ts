import { describe, expect, it } from 'vitest';
import { CLUSTER_OBJECTS_MODULE, scriptClusterConfig } from '../objects-cluster.ts';
import type { ScriptToRun } from '../script.ts';
import { buildFunctionsConfig } from './index.ts';
import type { FunctionsConfigInput } from './input.ts';
import type { Service, Worker } from './types.ts';

const ACCOUNT = 'a'.repeat(32);
const NAMESPACE = 'b'.repeat(32);

const counter: ScriptToRun = {
  script: { account_id: ACCOUNT, name: 'counter', workers_dev: true },
  version: {
    id: 'v1',
    main_module: 'index.js',
    modules: [{ name: 'index.js', type: 'esModule', content: Buffer.from('export default {};').toString('base64') }],
    bindings: [{ type: 'durable_object_namespace', name: 'COUNTER', class_name: 'Counter' }],
    compatibility_date: '2025-04-01',
    compatibility_flags: [],
    cpu_ms: null,
  },
  secrets: [],
  subdomain: 'sub',
  scheduled: false,
  durableObjects: [{ class_name: 'Counter', namespace_id: NAMESPACE, sqlite: true }],
};

const settings = {
  bucketFor: (account: string) => ({
    bucket: `s3://workerd-cluster/engines/${account}`,
    bucketOptions: ['aws_region=auto'],
  }),
  key: 'k'.repeat(64),
  host: '10.0.0.5',
  stopTimeoutMs: 8000,
};

function input(cluster: FunctionsConfigInput['cluster']): FunctionsConfigInput {
  return {
    scripts: [counter],
    r2: {
      workerdService: () => ({ address: 'unix:/run/r2.sock', injectRequestHeaders: [] }),
      localReads: () => undefined,
    },
    domain: 'example.com',
    maxCompatibilityDate: '2025-04-01',
    mode: 'router',
    tailFlagsDir: '/data/runtime/tail-flags',
    durableObjectsDir: '/data/durable-objects',
    cluster,
  };
}

const workerOf = (services: Service[]) =>
  (services.find((s) => s.name === `${ACCOUNT}/counter`) as { worker: Worker }).worker;
const diskOf = (services: Service[]) =>
  (services.find((s) => s.name === `durable-objects:${ACCOUNT}`) as { disk: { path: string } }).disk.path;

describe('a script that hosts Durable Objects in a workerd cluster (several nodes)', () => {
  it('is a cluster of its own in its account’s place, listening on the node’s private address', () => {
    expect(scriptClusterConfig({ ...settings, timeDivisor: 2 }, counter)).toEqual({
      bucket: `s3://workerd-cluster/engines/${ACCOUNT}/scripts/counter`,
      bucketOptions: ['aws_region=auto'],
      address: '10.0.0.5:0',
      key: 'k'.repeat(64),
      stopTimeoutMs: 8000,
      unsafeTimeDivisor: 2,
    });
  });

  it('keeps its objects on a disk of its own and gives its namespaces through the retrying module', () => {
    const cluster = scriptClusterConfig(settings, counter);
    const built = buildFunctionsConfig(input(cluster));
    expect(built.config.cluster).toEqual(cluster);
    expect(diskOf(built.config.services!)).toBe(`/data/durable-objects/${ACCOUNT}/cluster/counter`);
    const binding = workerOf(built.config.services!).bindings!.find((b) => b.name === 'COUNTER');
    expect(binding).toMatchObject({
      wrapped: {
        moduleName: CLUSTER_OBJECTS_MODULE,
        innerBindings: [{ name: 'namespace', durableObjectNamespace: { className: 'Counter' } }],
      },
    });
    expect(built.config.extensions?.[0]?.modules?.map((m) => m.name)).toEqual([CLUSTER_OBJECTS_MODULE]);
  });

  it('on one node: the account’s disk and the namespace as workerd gives it, no cluster', () => {
    const built = buildFunctionsConfig(input(undefined));
    expect(built.config.cluster).toBeUndefined();
    expect(built.config.extensions).toBeUndefined();
    expect(diskOf(built.config.services!)).toBe(`/data/durable-objects/${ACCOUNT}`);
    const binding = workerOf(built.config.services!).bindings!.find((b) => b.name === 'COUNTER');
    expect(binding).toEqual({ name: 'COUNTER', durableObjectNamespace: { className: 'Counter' } });
  });
});
