import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import { LATENCY_BUCKETS } from '../shared/metrics.ts';
import type { LocalCache } from './isolate/contract.ts';
import { objectGateBinding, objectGateEntrypoint, objectIdsClass } from './remote-objects.ts';

/**
 * The modules of the platform's that run inside workerd (src/workerd/isolate/): TypeScript files that
 * typecheck as worker code (isolate/tsconfig.json), loaded into each script's worker beside the user's
 * modules, under `__ledge/` (a name users cannot give a module, upload.ts). They are the same for every
 * script; what differs per script is one generated module of constants, `__ledge/params.js`
 * (isolate/params.d.ts declares it), and the wrapper `__ledge_main.js` that imports the user's main module.
 */

/** The folder (module name prefix) of the platform's modules in a worker. */
export const PLATFORM_DIR = '__ledge';
/** The module workerd starts: the wrapper around the user's main module. */
export const WRAPPER = '__ledge_main.js';
/** The platform's modules every script's worker gets (imports decide the order they run in). */
export const SCRIPT_MODULES = [
  'contract',
  'console',
  'invocation',
  'trace',
  'metrics',
  'subrequests',
  'local-body',
  'r2-cache',
  'r2',
  'egress',
  'host-guard',
  'error-page',
  'object-limits',
  'object-gate',
] as const;
/** The module of the ping service, and what it imports. */
export const PING_MODULES = ['ping', 'contract'] as const;
export type IsolateModule =
  | (typeof SCRIPT_MODULES)[number]
  | (typeof PING_MODULES)[number]
  | 'entry-router'
  | 'remote-objects'
  | 'cluster-objects'
  | 'asset-cache'
  | 'void-cache';

const compiled = new Map<IsolateModule, string>();
/**
 * A module's JavaScript: its TypeScript with the types taken out (esbuild's transform, no bundling: imports
 * stay as written), made once per process, when a config is first written (nothing is read while modules load).
 */
export function isolateModule(name: IsolateModule): string {
  let code = compiled.get(name);
  if (code === undefined) {
    const source = readFileSync(join(import.meta.dirname, 'isolate', `${name}.ts`), 'utf8');
    code = transformSync(source, {
      loader: 'ts',
      format: 'esm',
      target: 'esnext',
      sourcefile: `${PLATFORM_DIR}/${name}.ts`,
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    }).code;
    compiled.set(name, code);
  }
  return code;
}

/** The generated module of one script's parameters. */
export const PARAMS_MODULE = `${PLATFORM_DIR}/params.js`;
/** A platform module's name in the worker. */
export const platformModuleName = (name: IsolateModule): string => `${PLATFORM_DIR}/${name}.js`;

/** What the platform's modules of one script are parameterised by (isolate/params.d.ts). */
export interface IsolateParams {
  accountId: string;
  scriptName: string;
  subrequestLimit: number;
  localBodyKey: string | undefined;
  localBuckets: Record<string, number>;
  /** Set when objects may be cached in the isolate (isolate/r2-cache.ts). */
  localCache: LocalCache | undefined;
}

/** `__ledge/params.js`: constants only, each a JSON literal. */
export function paramsModule(params: IsolateParams): string {
  const values: Record<string, unknown> = {
    ACCOUNT_ID: params.accountId,
    SCRIPT_NAME: params.scriptName,
    LATENCY_BUCKETS,
    SUBREQUEST_LIMIT: params.subrequestLimit,
    LOCAL_BODY_KEY: params.localBodyKey ?? null,
    LOCAL_BUCKETS: params.localBuckets,
    CACHE_KEY: params.localCache?.metadataKey ?? null,
    SLOT_BUCKETS: params.localCache?.buckets ?? {},
  };
  return Object.entries(values)
    .map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};\n`)
    .join('');
}

/** The wrapper's export that service bindings to a script's default entrypoint name. */
export const SERVICE_EXPORT = '__ledgeService';

/**
 * The module workerd starts: runs the platform's modules first (imports run in order: trace.ts brings local
 * bodies, egress and console), then re-exports the user's main, its default export wrapped. Each invocation's
 * subrequests are counted (subrequests.ts) in its frame (invocation.ts): the limit module comes after the egress
 * module, which replaces fetch too, so the count wraps the egress check and a refused fetch() counts as a
 * subrequest, as on Cloudflare. Then metrics (metrics.ts), tail traces (trace.ts) with the frame, and with
 * `hostGuard` (only one script is routed, the socket reaches it directly) the router's 404 for other hosts.
 * Outside all of them, an exception becomes Cloudflare's 1101 page (error-page.ts), once recorded.
 */
export function wrapperSource(
  mainModule: string,
  hostGuard?: { host: string; domain: string },
  objectClasses: readonly { name: string; sqlite: boolean }[] = [],
  remoteNamespaces: readonly string[] = [],
  objectMaxBytes?: number,
): string {
  const main = JSON.stringify(`./${mainModule}`);
  const limits = JSON.stringify(objectMaxBytes === undefined ? {} : { storageBytes: objectMaxBytes });
  const from = (name: IsolateModule) => JSON.stringify(`./${platformModuleName(name)}`);
  const guard = hostGuard
    ? `guardHost(main, ${JSON.stringify(hostGuard.host)}, ${JSON.stringify(hostGuard.domain)})`
    : 'main';
  return (
    `import { __ledgeTrace } from ${from('trace')};\n` +
    `import ${from('subrequests')};\n` +
    `import { instrument } from ${from('metrics')};\n` +
    `import { answerExceptions } from ${from('error-page')};\n` +
    (hostGuard ? `import { guardHost } from ${from('host-guard')};\n` : '') +
    // Before the user's modules: it takes the classes' hidden gate bindings out of env (isolate/object-gate.ts).
    (objectClasses.length > 0 || remoteNamespaces.length > 0
      ? `import { objectGate, idsOnly } from ${from('object-gate')};\n`
      : '') +
    `export * from ${main};\n` +
    `import main from ${main};\n` +
    // A local export wins over `export *`: the Durable Object classes are exported with their storage limited.
    (objectClasses.length > 0
      ? `import * as __ledgeUser from ${main};\nimport { limitStorage } from ${from('object-limits')};\n` +
        objectClasses
          .map(
            (c) =>
              `export const ${c.name} = limitStorage(__ledgeUser[${JSON.stringify(c.name)}], ${c.sqlite}, ${limits});\n`,
          )
          .join('')
      : '') +
    // Each hosted class's gate for other scripts' bindings, and the classes that derive remote classes' ids
    // (remote-objects.ts). Class names are JavaScript identifiers (upload.ts), namespace ids hex.
    (objectClasses.length > 0 || remoteNamespaces.length > 0
      ? objectClasses
          .map(
            (c) =>
              `export const ${objectGateEntrypoint(c.name)} = objectGate(${JSON.stringify(objectGateBinding(c.name))});\n`,
          )
          .join('') + remoteNamespaces.map((id) => `export const ${objectIdsClass(id)} = idsOnly();\n`).join('')
      : '') +
    // Service bindings to the default export reach `served`: without the Host guard (a binding's request
    // carries whatever URL its caller chose).
    `const served = answerExceptions(instrument(__ledgeTrace(main)));\n` +
    (hostGuard
      ? `export default answerExceptions(instrument(__ledgeTrace(${guard})));\n`
      : `export default served;\n`) +
    `export { served as ${SERVICE_EXPORT} };\n`
  );
}
