import { randomUUID } from 'node:crypto';
import { egressRules, functionsNetwork, networkService } from '../network-service.ts';
import { isLoaded, routedScriptKey } from '../script.ts';
import type { ScriptContext } from './bindings/index.ts';
import { ConfigFiles, type BuiltConfig } from './built.ts';
import type { FunctionsConfigInput } from './input.ts';
import { httpSocket, pingService, pingSocket, ROUTER_SERVICE, routerService } from './platform-services.ts';
import { compatibilityDate, scriptWorker } from './script-worker.ts';
import { assetsService, assetsServiceName } from './assets-service.ts';
import { workflowServed, workflowsEngineName } from './bindings/workflow.ts';
import type { Service, Socket, Worker_Binding } from './types.ts';
import { FUNCTION_V8_FLAGS } from './v8-flags.ts';
import { isolateModule, SERVICE_EXPORT } from '../isolate-modules.ts';
import { REMOTE_OBJECTS_MODULE } from '../remote-objects.ts';
import { CLUSTER_OBJECTS_MODULE } from '../objects-cluster.ts';
import type { ScriptToRun } from '../script.ts';
import { DEFAULT_ENTRYPOINT, SERVICE_RPC_HOST, serviceSocketName } from '../service-sockets.ts';
import { QUEUE_RELAY_ENTRYPOINT, queueRelayService, queueRelayServiceName } from './queue-relay.ts';

/**
 * The sockets where other scripts' service bindings reach this one: one per bound entrypoint, speaking HTTP
 * and Cap'n Proto RPC (service-sockets.ts). The address is a placeholder: each process binds its own path.
 */
function servedEntrypointSockets(deployed: ScriptToRun, service: string): Socket[] {
  return (deployed.entrypoints ?? []).map((entrypoint, index) => ({
    name: serviceSocketName(index),
    address: '127.0.0.1:0',
    http: { capnpConnectHost: SERVICE_RPC_HOST },
    service:
      entrypoint === QUEUE_RELAY_ENTRYPOINT
        ? { name: queueRelayServiceName(service), entrypoint: 'QueueRelay' }
        : (workflowServed(deployed, entrypoint) ?? {
            name: service,
            entrypoint: entrypoint === DEFAULT_ENTRYPOINT ? SERVICE_EXPORT : entrypoint,
          }),
  }));
}

/**
 * The config of processes that run scripts: a worker per script, the entry router in front of them (or,
 * with one routed script, the socket goes to it directly), the services their bindings name, functions'
 * network, and the ping service. Pure: the files to embed and the directories to make come back with it.
 */
export function buildFunctionsConfig(input: FunctionsConfigInput): BuiltConfig {
  const files = new ConfigFiles();
  // Scripts reachable by Host are served, and scripts with Cron Triggers are loaded for their scheduled()
  // handler (as on Cloudflare, workers_dev = false does not stop crons); when exactly one script is loaded
  // and it is routed, the socket goes to it directly.
  const scripts = input.mode === 'router' ? input.scripts.filter(isLoaded) : input.scripts;
  // A script with assets is reached through its `assets` service, which has no Host guard: behind the router.
  // A routed script is named by the traffic port's header, which only the router reads: behind the router too.
  const direct =
    input.mode === 'router' &&
    scripts.length === 1 &&
    scripts[0]!.script.workers_dev &&
    !scripts[0]!.assets &&
    !scripts[0]!.routed;
  const domain = input.domain.toLowerCase();
  const metricsSecret = input.metricsSecret ?? randomUUID();
  const network = input.egress ? functionsNetwork(input.egress) : undefined;
  const rules = egressRules(network);

  const workers: Service[] = [];
  const shared = new Map<string, Service>();
  const directories: string[] = [];
  const routes: Record<string, string> = {};
  const routerBindings: Worker_Binding[] = [];
  const cachedAssets: string[] = [];
  const pingScripts: Record<string, { a: string; s: string }> = {};
  const pingBindings: Worker_Binding[] = [];
  const pingWorkflows: Record<string, { a: string; s: string }> = {};
  const entrypointSockets: Socket[] = [];
  scripts.forEach((deployed, index) => {
    const { script, subdomain } = deployed;
    const binding = `S${index}`;
    // The router's keys for it: its workers.dev host, and its routed key when a route or domain names it.
    const keys: string[] = [];
    if (script.workers_dev) keys.push(`${script.name}.${subdomain}`);
    if (deployed.routed && input.routeKey) keys.push(routedScriptKey(input.routeKey, script.account_id, script.name));
    // An assets-only version: workerd's assets service alone answers its host.
    const assetsOnly =
      deployed.version.main_module === ''
        ? assetsService(deployed, {
            compatibilityDate: compatibilityDate(deployed.version.compatibility_date, input.maxCompatibilityDate),
            compatibilityFlags: deployed.version.compatibility_flags,
          })
        : undefined;
    if (assetsOnly) {
      workers.push(assetsOnly);
      for (const key of keys) routes[key] = binding;
      if (keys.length > 0) routerBindings.push({ name: binding, service: assetsOnly.name });
      // No user Worker answers there: the router may keep its small files (isolate/asset-cache.ts).
      if (keys.length > 0) cachedAssets.push(binding);
      return;
    }
    const context: ScriptContext = {
      deployed,
      r2: input.r2,
      tailFlagsDir: input.tailFlagsDir,
      metricsSecret,
      egressRules: rules,
      durableObjectsDir: input.durableObjectsDir,
      clustered: input.cluster !== undefined,
      engineSockets: input.engineSockets,
      serviceSocket: input.serviceSocket,
    };
    const built = scriptWorker(context, files, {
      folder: `s${index}`,
      maxCompatibilityDate: input.maxCompatibilityDate,
      subrequestsPerInvocation: input.subrequestsPerInvocation,
      durableObjectMaxBytes: input.durableObjectMaxBytes,
      hostGuard: direct ? { host: `${script.name}.${subdomain}.${domain}`, domain } : undefined,
    });
    workers.push(built.service);
    // A queue consumer: the engine's deliveries arrive through the relay beside it (queue-relay.ts).
    if (deployed.entrypoints?.includes(QUEUE_RELAY_ENTRYPOINT))
      workers.push(queueRelayService(files, built.service.name, deployed.consumedQueues ?? {}));
    for (const service of built.services) {
      const known = shared.get(service.name);
      // Services are shared by name (one bucket's, for every script bound to it): one name, one service.
      if (known && JSON.stringify(known) !== JSON.stringify(service))
        throw new Error(`two different workerd services are named ${service.name}`);
      shared.set(service.name, service);
    }
    directories.push(...built.directories);
    for (const key of keys) routes[key] = binding;
    if (keys.length > 0) {
      // With assets, requests go to workerd's assets router, which calls the script (bindings/assets.ts).
      routerBindings.push({
        name: binding,
        service: deployed.assets ? assetsServiceName(deployed) : built.service.name,
      });
    }
    // The ping service reaches every loaded script: metrics, and scheduled() for Cron Triggers.
    pingScripts[binding] = { a: script.account_id, s: script.name };
    pingBindings.push({ name: binding, service: built.service.name });
    // The Ledge server reaches a script's Workflows engine through the ping service only.
    if ('worker' in built.service && built.service.worker.workflowsEngine) {
      pingWorkflows[`W${index}`] = { a: script.account_id, s: script.name };
      pingBindings.push({ name: `W${index}`, service: workflowsEngineName(deployed) });
    }
    if (input.serveEntrypoints) entrypointSockets.push(...servedEntrypointSockets(deployed, built.service.name));
  });

  let entry: string;
  const services: Service[] = [];
  if (input.mode === 'router' && !direct) {
    services.push(
      routerService(files, [
        { name: 'ROUTES', json: JSON.stringify(routes) },
        { name: 'DOMAIN', text: domain },
        { name: 'ASSET_CACHE', json: JSON.stringify(cachedAssets) },
        ...routerBindings,
      ]),
    );
    entry = ROUTER_SERVICE;
  } else {
    const only = workers[0];
    if (!only) throw new Error('single mode needs one script');
    entry = only.name;
  }
  services.push(...workers, ...shared.values());
  if (network) services.push(networkService(network));
  const httpSockets = Array.from({ length: input.httpSockets ?? 1 }, (_, index) => httpSocket(entry, index));
  const sockets: Socket[] = [...httpSockets, ...entrypointSockets];
  if (input.ping) {
    services.push(
      pingService(files, [
        { name: 'SCRIPTS', json: JSON.stringify(pingScripts) },
        { name: 'WORKFLOW_ENGINES', json: JSON.stringify(pingWorkflows) },
        { name: 'SECRET', text: metricsSecret },
        ...pingBindings,
      ]),
    );
    sockets.push(pingSocket());
  }
  // `script_name` Durable Object bindings are made by an internal module (remote-objects.ts), and so are a
  // clustered script's own ones (objects-cluster.ts).
  const remote = scripts.some((d) => (d.remoteObjects?.length ?? 0) > 0);
  const modules = [
    ...(remote
      ? [
          {
            name: REMOTE_OBJECTS_MODULE,
            internal: true,
            esModule: files.embed('remote-objects.js', isolateModule('remote-objects')),
          },
        ]
      : []),
    ...(input.cluster
      ? [
          {
            name: CLUSTER_OBJECTS_MODULE,
            internal: true,
            esModule: files.embed('cluster-objects.js', isolateModule('cluster-objects')),
          },
        ]
      : []),
  ];
  const extensions = modules.length > 0 ? [{ modules }] : undefined;
  return {
    config: {
      services,
      sockets,
      v8Flags: FUNCTION_V8_FLAGS,
      ...(extensions ? { extensions } : {}),
      ...(input.cluster ? { cluster: input.cluster } : {}),
    },
    files: files.list(),
    directories: [...new Set(directories)],
  };
}
