import { describe, expect, it } from 'vitest';
import { capnpString, serializeConfig } from './serialize.ts';
import { Embed, Enumerant, VOID, type Config, type Service, type Socket, type Worker_Binding } from './types.ts';

/** The text of one service, socket or binding as it appears in a serialised config. */
const serviceText = (service: Service) =>
  serializeConfig({ services: [service] })
    .split('\n')[3]!
    .trim();
const bindingText = (binding: Worker_Binding) => {
  const text = serviceText({ name: 'w', worker: { modules: [], bindings: [binding] } });
  return text.slice(text.indexOf('bindings = [') + 'bindings = ['.length, -3);
};

describe('capnpString', () => {
  it('quotes, escapes " and \\, and writes control characters as \\xNN', () => {
    expect(capnpString('plain')).toBe('"plain"');
    expect(capnpString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(capnpString('tab\there\nnul\0del\x7f')).toBe('"tab\\x09here\\x0anul\\x00del\\x7f"');
  });

  it('writes other characters raw, astral ones included', () => {
    expect(capnpString('é→😀 ~')).toBe('"é→😀 ~"');
  });
});

describe('serializeConfig', () => {
  it('writes the schema import, the const and each top-level field', () => {
    const config: Config = { services: [], v8Flags: ['--a'], structuredLogging: true };
    expect(serializeConfig(config)).toBe(
      'using Workerd = import "/workerd/workerd.capnp";\n' +
        'const config :Workerd.Config = (\n' +
        '  services = [],\n' +
        '  v8Flags = [\n    "--a"\n  ],\n' +
        '  structuredLogging = true,\n' +
        ');\n',
    );
  });

  it('writes every kind of service', () => {
    expect(serviceText({ name: 'd', disk: { path: '/x', writable: false } })).toBe(
      '(name = "d", disk = (path = "/x", writable = false))',
    );
    expect(serviceText({ name: 'n', network: { allow: ['public'], deny: [] } })).toBe(
      '(name = "n", network = (allow = ["public"], deny = []))',
    );
    expect(
      serviceText({
        name: 'e',
        external: {
          address: 'unix:/s',
          http: { style: new Enumerant('proxy'), injectRequestHeaders: [{ name: 'h', value: 'v' }] },
        },
      }),
    ).toBe(
      '(name = "e", external = (address = "unix:/s", http = (style = proxy, injectRequestHeaders = [(name = "h", value = "v")])))',
    );
    expect(serviceText({ name: 'b', bucket: { path: '/bk' } })).toBe('(name = "b", bucket = (path = "/bk"))');
    expect(
      serviceText({ name: 'a', assets: { path: '/assets', config: new Embed('assets.json'), userWorker: 'w' } }),
    ).toBe('(name = "a", assets = (path = "/assets", config = embed "assets.json", userWorker = "w"))');
    expect(
      serviceText({
        name: 'w',
        worker: {
          modules: [
            { name: 'm.js', esModule: new Embed('s0/m.js') },
            { name: 'b.bin', data: new Uint8Array([0, 1, 0xff]) },
          ],
          compatibilityDate: '2025-01-01',
          compatibilityFlags: ['nodejs_compat'],
          durableObjectNamespaces: [{ className: 'Counter', uniqueKey: 'k', enableSql: true }],
          durableObjectStorage: { localDisk: 'do-disk' },
        },
      }),
    ).toBe(
      '(name = "w", worker = (modules = [(name = "m.js", esModule = embed "s0/m.js"), (name = "b.bin", data = 0x"0001ff")], ' +
        'compatibilityDate = "2025-01-01", compatibilityFlags = ["nodejs_compat"], ' +
        'durableObjectNamespaces = [(className = "Counter", uniqueKey = "k", enableSql = true)], ' +
        'durableObjectStorage = (localDisk = "do-disk")))',
    );
  });

  it('writes every kind of binding the records declare', () => {
    expect(bindingText({ name: 'T', text: 'x"y' })).toBe('(name = "T", text = "x\\"y")');
    expect(bindingText({ name: 'J', json: '{"a":1}' })).toBe('(name = "J", json = "{\\"a\\":1}")');
    expect(bindingText({ name: 'D', data: new Uint8Array([10]) })).toBe('(name = "D", data = 0x"0a")');
    expect(bindingText({ name: 'S', service: { name: 's', entrypoint: 'E', props: { json: '{}' } } })).toBe(
      '(name = "S", service = (name = "s", entrypoint = "E", props = (json = "{}")))',
    );
    expect(bindingText({ name: 'R', r2Bucket: 'r2:a/b' })).toBe('(name = "R", r2Bucket = "r2:a/b")');
    expect(bindingText({ name: 'K', kvNamespace: 'kv' })).toBe('(name = "K", kvNamespace = "kv")');
    expect(bindingText({ name: 'Q', queue: 'q' })).toBe('(name = "Q", queue = "q")');
    expect(bindingText({ name: 'O', durableObjectNamespace: { className: 'C', serviceName: 'w' } })).toBe(
      '(name = "O", durableObjectNamespace = (className = "C", serviceName = "w"))',
    );
    expect(bindingText({ name: 'U', unsafeEval: VOID })).toBe('(name = "U", unsafeEval = void)');
    expect(bindingText({ name: 'W', wrapped: { moduleName: 'mod', innerBindings: [{ name: 'i', json: '1' }] } })).toBe(
      '(name = "W", wrapped = (moduleName = "mod", innerBindings = [(name = "i", json = "1")]))',
    );
  });

  it('writes sockets, TLS and the cluster config', () => {
    const socket: Socket = {
      name: 'https',
      address: '*:443',
      https: {
        options: {},
        tlsOptions: {
          keypair: { privateKey: new Embed('k.pem'), certificateChain: 'CERT' },
          minVersion: new Enumerant('tls1Dot2'),
        },
      },
      service: 'router',
    };
    const text = serializeConfig({ sockets: [socket], cluster: { address: '127.0.0.1:7000', stopTimeoutMs: 100 } });
    expect(text).toContain(
      '(name = "https", address = "*:443", https = (options = (), tlsOptions = (keypair = (privateKey = embed "k.pem", certificateChain = "CERT"), minVersion = tls1Dot2)), service = "router")',
    );
    expect(text).toContain('  cluster = (address = "127.0.0.1:7000", stopTimeoutMs = 100),\n');
  });

  it('leaves undefined fields out', () => {
    expect(serviceText({ name: 'd', disk: { path: '/x', writable: undefined } })).toBe(
      '(name = "d", disk = (path = "/x"))',
    );
  });

  it('refuses what capnp text cannot hold instead of writing it', () => {
    expect(() => serializeConfig({ cluster: { stopTimeoutMs: 1.5 } })).toThrow(/integer/);
    expect(() => serializeConfig({ cluster: { ['bad name' as 'key']: 'x' } })).toThrow(/field or enumerant name/);
    expect(() =>
      serializeConfig({ sockets: [{ name: 's', http: { style: new Enumerant('a b' as 'host') } }] }),
    ).toThrow(/field or enumerant name/);
    expect(() => serializeConfig({ v8Flags: [null as unknown as string] })).toThrow(/cannot hold/);
  });
});
