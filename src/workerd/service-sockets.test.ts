import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BINDING_KINDS } from './config/bindings/index.ts';
import { buildFunctionsConfig, writeConfig } from './config/index.ts';
import { SERVICE_EXPORT } from './isolate-modules.ts';
import { isLoaded, type Binding, type ScriptToRun } from './script.ts';
import { missingEntrypoint, SERVICE_RPC_HOST, serviceSocketPath, withServedEntrypoints } from './service-sockets.ts';
import { workerdBinary } from './workerd-process.ts';

const work = mkdtempSync(join(tmpdir(), 'ledge-service-sockets-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function script(account: string, name: string, bindings: Binding[], workersDev = true): ScriptToRun {
  const source = `import { WorkerEntrypoint } from 'cloudflare:workers';
export class Admin extends WorkerEntrypoint { ping() { return 1; } }
export default { fetch() { return new Response('ok'); } };`;
  return {
    script: { account_id: account, name, workers_dev: workersDev },
    version: {
      id: 'v1',
      main_module: 'index.js',
      modules: [{ name: 'index.js', type: 'esModule', content: Buffer.from(source).toString('base64') }],
      bindings,
      compatibility_date: '2025-01-01',
      compatibility_flags: [],
      cpu_ms: null,
    },
    secrets: [],
    subdomain: 'sub',
    scheduled: false,
  };
}

const socketAt = (account: string, name: string, entrypoint: string) =>
  serviceSocketPath('/run/s', account, name, entrypoint);

describe('service bindings: who serves which entrypoint', () => {
  it('marks each bound entrypoint on its target, and loads a target bound only through a binding, transitively', () => {
    const scripts = withServedEntrypoints([
      script('a', 'front', [
        { type: 'service', name: 'API', service: 'api' },
        { type: 'service', name: 'ADMIN', service: 'api', entrypoint: 'Admin' },
        { type: 'service', name: 'SELF', service: 'front' },
      ]),
      script('a', 'api', [{ type: 'service', name: 'DB', service: 'db' }], false),
      script('a', 'db', [], false),
      script('a', 'unbound', [], false),
    ]);
    expect(scripts.map((s) => [s.script.name, s.entrypoints, isLoaded(s)])).toEqual([
      ['front', undefined, true],
      ['api', ['Admin', 'default'], true],
      ['db', ['default'], true],
      ['unbound', undefined, false],
    ]);
  });

  it("never serves another account's script: a name is looked up in the caller's account", () => {
    const scripts = withServedEntrypoints([
      script('a', 'front', [{ type: 'service', name: 'API', service: 'api' }]),
      script('b', 'api', [], false),
    ]);
    expect(scripts[1]!.entrypoints).toBeUndefined();
    expect(isLoaded(scripts[1]!)).toBe(false);
  });

  it("serves a class's gate to the account's scripts that bind it by script_name, and only theirs", () => {
    const scripts = withServedEntrypoints([
      script('a', 'caller', [
        { type: 'durable_object_namespace', name: 'C', class_name: 'Counter', script_name: 'host' },
        { type: 'durable_object_namespace', name: 'OWN', class_name: 'Own' },
      ]),
      script('a', 'host', [], false),
      script('b', 'host', [], false),
    ]);
    expect(scripts.map((s) => [s.script.account_id, s.entrypoints, isLoaded(s)])).toEqual([
      ['a', undefined, true],
      ['a', ['__ledgeObjects_Counter'], true],
      ['b', undefined, false],
    ]);
  });

  it("reads which entrypoint workerd's load error says the script does not export", () => {
    const error =
      'Socket "svc-0" refers to service "a/api" with a named entrypoint "Nope", but "a/api" has no such named entrypoint.';
    expect(missingEntrypoint(error)).toBe('Nope');
    expect(missingEntrypoint('Uncaught SyntaxError: Unexpected token')).toBeUndefined();
  });

  it('gives each (account, script, entrypoint) its own short socket path', () => {
    const paths = new Set([socketAt('a', 'x', 'default'), socketAt('b', 'x', 'default'), socketAt('a', 'x', 'Admin')]);
    expect(paths.size).toBe(3);
    for (const path of paths) expect(path.length).toBeLessThan(40);
  });
});

describe('service bindings as config', () => {
  const caller = script('a', 'front', []);
  const context = {
    deployed: caller,
    r2: { workerdService: () => ({ address: 'unix:/x', injectRequestHeaders: [] }) },
  };
  const full = { ...context, tailFlagsDir: work, metricsSecret: 's', egressRules: null, serviceSocket: socketAt };

  it("another script: an external service at its entrypoint's socket, speaking Cap'n Proto RPC too", () => {
    const out = BINDING_KINDS.service({ type: 'service', name: 'ADMIN', service: 'api', entrypoint: 'Admin' }, full);
    expect(out.bindings).toEqual([{ name: 'ADMIN', service: 'service:a/api#Admin' }]);
    expect(out.services).toEqual([
      {
        name: 'service:a/api#Admin',
        external: { address: `unix:${socketAt('a', 'api', 'Admin')}`, http: { capnpConnectHost: SERVICE_RPC_HOST } },
      },
    ]);
  });

  it('the script itself: its own worker, in process, the default export without the Host guard', () => {
    expect(BINDING_KINDS.service({ type: 'service', name: 'SELF', service: 'front' }, full).bindings).toEqual([
      { name: 'SELF', service: { name: 'a/front', entrypoint: SERVICE_EXPORT } },
    ]);
  });

  it('serves each bound entrypoint on a socket of its own, and workerd accepts the config', () => {
    const target = {
      ...script('a', 'api', [{ type: 'service', name: 'SELF', service: 'api' }], false),
      entrypoints: ['Admin', 'default'],
    };
    const built = buildFunctionsConfig({
      scripts: [target],
      r2: context.r2,
      domain: 'example.com',
      maxCompatibilityDate: '2025-01-01',
      mode: 'router',
      tailFlagsDir: work,
      ping: true,
      serviceSocket: socketAt,
      serveEntrypoints: true,
    });
    expect(built.config.sockets!.filter((s) => s.name.startsWith('svc-'))).toEqual([
      {
        name: 'svc-0',
        address: '127.0.0.1:0',
        http: { capnpConnectHost: SERVICE_RPC_HOST },
        service: { name: 'a/api', entrypoint: 'Admin' },
      },
      {
        name: 'svc-1',
        address: '127.0.0.1:0',
        http: { capnpConnectHost: SERVICE_RPC_HOST },
        service: { name: 'a/api', entrypoint: SERVICE_EXPORT },
      },
    ]);
    const path = writeConfig(join(work, 'config'), built);
    const compiled = spawnSync(workerdBinary(), ['compile', '--config-only', path], { encoding: 'utf8' });
    expect(compiled.status, compiled.stderr).toBe(0);
  });
});
