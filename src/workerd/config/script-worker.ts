import { DEFAULT_SUBREQUESTS_PER_INVOCATION } from '../limits.ts';
import {
  paramsModule,
  PARAMS_MODULE,
  SCRIPT_MODULES,
  WRAPPER,
  wrapperSource,
  type IsolateParams,
} from '../isolate-modules.ts';
import type { ModuleType } from '../script.ts';
import {
  bindingContribution,
  PLATFORM_BINDINGS,
  secretText,
  type Contribution,
  type ScriptContext,
} from './bindings/index.ts';
import type { ConfigFiles } from './built.ts';
import { cacheService, CACHE_SERVICE, platformModule } from './platform-services.ts';
import type { Embed, Service, Worker_Module } from './types.ts';

/** workerd's compatibility flag that makes `node:async_hooks` (AsyncLocalStorage) importable. */
const ALS_FLAG = 'nodejs_als';
/** Scripts uploaded without a date get the oldest behaviour, as on Cloudflare. */
const DEFAULT_COMPATIBILITY_DATE = '2021-11-03';
/** A user's module by its type (script.ts ModuleTypes), as the schema's union member of that kind. */
const MODULE: Record<ModuleType, (name: string, content: Embed) => Worker_Module> = {
  esModule: (name, esModule) => ({ name, esModule }),
  commonJs: (name, commonJsModule) => ({ name, commonJsModule }),
  text: (name, text) => ({ name, text }),
  data: (name, data) => ({ name, data }),
  wasm: (name, wasm) => ({ name, wasm }),
  json: (name, json) => ({ name, json }),
};

/** One script's worker as config: its service, and the services and directories its bindings need. */
export interface ScriptWorker {
  service: Service;
  services: Service[];
  directories: string[];
}

export interface ScriptWorkerOptions {
  /** The script's folder among the config's files (`s<index>`). */
  folder: string;
  maxCompatibilityDate: string;
  subrequestsPerInvocation?: number | undefined;
  /** Storage one SQLite-backed Durable Object may use; the isolate's default (Cloudflare's) without it. */
  durableObjectMaxBytes?: number | undefined;
  /** Set when the socket reaches the script directly: it answers only its own host (isolate/host-guard.ts). */
  hostGuard?: { host: string; domain: string } | undefined;
}

/**
 * A script's worker: the wrapper that workerd starts, the platform's modules and the user's; the user's
 * bindings by their kind's module (bindings/index.ts), then the platform's, then the secrets no binding
 * shadows.
 */
export function scriptWorker(context: ScriptContext, files: ConfigFiles, options: ScriptWorkerOptions): ScriptWorker {
  const { script, version, secrets } = context.deployed;
  const bound = new Set(version.bindings.map((b) => b.name));
  const parts: Contribution[] = [
    ...version.bindings.map((binding) => bindingContribution(binding, context)),
    ...PLATFORM_BINDINGS.map((module) => module(context)),
    ...secrets.filter((secret) => !bound.has(secret.name)).map((secret) => secretText(secret, context)),
  ];
  const params: IsolateParams = {
    accountId: script.account_id,
    scriptName: script.name,
    subrequestLimit: options.subrequestsPerInvocation ?? DEFAULT_SUBREQUESTS_PER_INVOCATION,
    localBodyKey: undefined,
    localBuckets: {},
    localCache: undefined,
  };
  for (const part of parts) Object.assign(params, part.params);
  const own = (name: string, content: string | Uint8Array) => files.embed(`${options.folder}/${name}`, content);
  const modules: Worker_Module[] = [
    {
      name: WRAPPER,
      esModule: own(
        WRAPPER,
        wrapperSource(
          version.main_module,
          options.hostGuard,
          (context.deployed.durableObjects ?? []).map((c) => ({ name: c.class_name, sqlite: c.sqlite })),
          [...new Set((context.deployed.remoteObjects ?? []).map((r) => r.namespace_id))],
          options.durableObjectMaxBytes,
        ),
      ),
    },
    ...SCRIPT_MODULES.map((name) => platformModule(files, name)),
    { name: PARAMS_MODULE, esModule: own(PARAMS_MODULE, paramsModule(params)) },
    ...version.modules.map((m) => MODULE[m.type](m.name, own(m.name, Buffer.from(m.content, 'base64')))),
  ];
  const date = compatibilityDate(version.compatibility_date, options.maxCompatibilityDate);
  // Two bindings to one remote class bring its ids class twice: one namespace per class.
  const durableObjectNamespaces = [
    ...new Map(parts.flatMap((part) => part.durableObjectNamespaces ?? []).map((n) => [n.className, n])).values(),
  ];
  return {
    service: {
      name: `${script.account_id}/${script.name}`,
      worker: {
        modules,
        compatibilityDate: date,
        compatibilityFlags: withAsyncLocalStorage(version.compatibility_flags),
        bindings: parts.flatMap((part) => part.bindings),
        durableObjectNamespaces: durableObjectNamespaces.length > 0 ? durableObjectNamespaces : undefined,
        durableObjectStorage: parts.find((part) => part.durableObjectStorage)?.durableObjectStorage,
        workflowsEngine: parts.find((part) => part.workflowsEngine)?.workflowsEngine,
        cacheApiOutbound: { name: CACHE_SERVICE },
      },
    },
    services: [...parts.flatMap((part) => part.services ?? []), cacheService(files)],
    directories: parts.flatMap((part) => part.directories ?? []),
  };
}

/** The version's date (the oldest behaviour without one, as on Cloudflare), clamped to what workerd knows. */
export function compatibilityDate(date: string | null, max: string): string {
  const chosen = date ?? DEFAULT_COMPATIBILITY_DATE;
  return chosen > max ? max : chosen;
}

/** The trace shim imports node:async_hooks: available with nodejs_compat, else through nodejs_als. */
function withAsyncLocalStorage(flags: string[]): string[] {
  return flags.some((f) => f === ALS_FLAG || f.startsWith('nodejs_compat')) ? flags : [...flags, ALS_FLAG];
}
