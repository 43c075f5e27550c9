import { isolateModule, PING_MODULES, platformModuleName, type IsolateModule } from '../isolate-modules.ts';
import { ROUTED_SCRIPT_HEADER } from '../isolate/contract.ts';
import type { ConfigFiles } from './built.ts';
import type { Service, Socket, Worker_Binding, Worker_Module } from './types.ts';

/** The date the platform's own workers are written against. */
const PLATFORM_COMPATIBILITY_DATE = '2025-01-01';
export const ROUTER_SERVICE = 'ledge-router';
const PING_SERVICE = 'ledge-ping';
export const CACHE_SERVICE = 'ledge-cache';

/** The entry router (isolate/entry-router.ts): forwards each request by Host to the binding the routes name. */
export function routerService(files: ConfigFiles, bindings: Worker_Binding[]): Service {
  return {
    name: ROUTER_SERVICE,
    worker: {
      // The router imports the error pages and the asset cache from beside it ('./error-page.js').
      modules: [
        { name: 'entry-router.js', esModule: files.embed('entry-router.js', isolateModule('entry-router')) },
        { name: 'error-page.js', esModule: files.embed('error-page.js', isolateModule('error-page')) },
        { name: 'asset-cache.js', esModule: files.embed('asset-cache.js', isolateModule('asset-cache')) },
      ],
      compatibilityDate: PLATFORM_COMPATIBILITY_DATE,
      bindings: [...bindings, { name: 'ROUTED_HEADER', text: ROUTED_SCRIPT_HEADER }],
    },
  };
}

/**
 * The service the watchdog probes (isolate/ping.ts) on a socket of its own, which reaches every loaded script:
 * their request counts, and scheduled() for Cron Triggers.
 */
export function pingService(files: ConfigFiles, bindings: Worker_Binding[]): Service {
  return {
    name: PING_SERVICE,
    worker: {
      modules: PING_MODULES.map((name) => platformModule(files, name)),
      compatibilityDate: PLATFORM_COMPATIBILITY_DATE,
      bindings,
    },
  };
}

/**
 * The Cache API's backend of every Worker (isolate/void-cache.ts): it keeps nothing, as Cloudflare's cache does on
 * *.workers.dev. One service per config, shared by name by every script's worker.
 */
export function cacheService(files: ConfigFiles): Service {
  return {
    name: CACHE_SERVICE,
    worker: {
      modules: [{ name: 'void-cache.js', esModule: files.embed('void-cache.js', isolateModule('void-cache')) }],
      compatibilityDate: PLATFORM_COMPATIBILITY_DATE,
    },
  };
}

/** The name of the functions port's socket `index` in a config (the first is `http`). */
export function httpSocketName(index: number): string {
  return index === 0 ? 'http' : `http-${index}`;
}

/**
 * A socket of the functions port (the supervisor passes it as an inherited fd, so the address is a placeholder).
 */
export function httpSocket(service: string, index = 0): Socket {
  return { name: httpSocketName(index), address: '127.0.0.1:0', http: {}, service };
}

/** The watchdog's socket: every process binds it where --socket-addr says (the address is a placeholder). */
export function pingSocket(): Socket {
  return { name: 'ping', address: '127.0.0.1:0', http: {}, service: PING_SERVICE };
}

/** One of the platform's modules: the same for every worker, so embedded from one file. */
export function platformModule(files: ConfigFiles, name: IsolateModule): Worker_Module {
  const moduleName = platformModuleName(name);
  return { name: moduleName, esModule: files.embed(moduleName, isolateModule(name)) };
}
