import { describe, expect, it } from 'vitest';
import { buildEnginesConfig } from './engines-config.ts';
import { engineKinds } from './engines/index.ts';
import { serializeConfig } from './serialize.ts';

describe("an account's engines config", () => {
  const input = {
    accountId: 'acc',
    dataDir: '/data/engines/acc',
    socketDir: '/data/runtime/engines/abc',
  };
  const built = buildEnginesConfig(input, engineKinds({ d1: { maxDatabaseBytes: 1024 * 1024 } }));
  const text = serializeConfig(built.config);
  const file = (path: string) => String(built.files.find((f) => f.path === path)?.content);

  it('listens on one socket per engine kind, whatever namespaces or databases the account has', () => {
    expect(built.config.sockets!.map((s) => [s.name, s.address])).toEqual([
      ['kv', 'unix:/data/runtime/engines/abc/kv.sock'],
      ['d1', 'unix:/data/runtime/engines/abc/d1.sock'],
    ]);
    expect(built.directories).toEqual([
      '/data/engines/acc/kv/objects',
      '/data/engines/acc/kv/blobs',
      '/data/engines/acc/d1',
    ]);
  });

  it("runs workerd's d1.js with the size cap, its objects keyed by the account as before", () => {
    expect(text).toContain('bundled = "/workerd/d1.js"');
    expect(text).toContain('uniqueKey = "ledge-d1-acc"');
    expect(text).toContain('(name = "MAX_DATABASE_BYTES", json = "1048576")');
    expect(file('d1-limited.js')).toContain('setMaxPageCountForTest');
    expect(file('d1-main.js')).toContain('from "d1-limited.js"');
  });

  it("takes each kind's id from its own header, in its own shape", () => {
    const pattern = (path: string) => new RegExp(JSON.parse(/new RegExp\((".*")\)/.exec(file(path))![1]!) as string);
    expect(file('kv-main.js')).toContain('"x-ledge-kv-namespace"');
    expect(file('d1-main.js')).toContain('"x-ledge-d1-database"');
    const namespace = '0123456789abcdef0123456789abcdef';
    const database = '01234567-89ab-cdef-0123-456789abcdef';
    expect([pattern('kv-main.js').test(namespace), pattern('kv-main.js').test(database)]).toEqual([true, false]);
    expect([pattern('d1-main.js').test(database), pattern('d1-main.js').test(namespace)]).toEqual([true, false]);
    expect(pattern('d1-main.js').test(`${database}\n`)).toBe(false);
  });

  it("in a cluster: workerd's Config.cluster, KV's blobs in the cluster bucket, a blob cache on the node", () => {
    const cluster = {
      bucket: 's3://workerd-cluster/engines/acc',
      bucketOptions: ['aws_endpoint=http://127.0.0.1:9000'],
      address: '10.0.0.5:0',
      key: 'k'.repeat(64),
      stopTimeoutMs: 8000,
    };
    const clustered = buildEnginesConfig(input, engineKinds({ d1: { maxDatabaseBytes: 1024 * 1024 } }), cluster);
    expect(clustered.config.cluster).toEqual(cluster);
    const kv = clustered.config.services!.filter((s) => s.name.startsWith('kv-blob'));
    expect(kv).toEqual([
      { name: 'kv-blobs', bucket: { path: 'kv-blobs' } },
      { name: 'kv-blob-cache', disk: { path: '/data/engines/acc/kv/blob-cache', writable: true } },
    ]);
    const clusteredText = serializeConfig(clustered.config);
    expect(clusteredText).toContain('(name = "CLUSTERED", json = "true")');
    expect(clusteredText).toContain('(name = "BLOB_CACHE", service = "kv-blob-cache")');
    // Alone, nothing of it.
    expect(built.config.cluster).toBeUndefined();
    expect(text).not.toContain('CLUSTERED');
  });
});
