import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isLoaded, type ScriptToRun } from './script.ts';
import { capnpList, capnpString } from './capnp.ts';
import {
  isolateModule,
  paramsModule,
  PARAMS_MODULE,
  platformModuleName,
  PING_MODULES,
  SCRIPT_MODULES,
  WRAPPER,
  wrapperSource,
  type IsolateModule,
} from './isolate-modules.ts';
import { DEFAULT_SUBREQUESTS_PER_INVOCATION, ISOLATE_MEMORY_MIB } from './limits.ts';
import { externalService, hiddenBindings } from './hidden-bindings.ts';
import { egressRules, functionsNetwork, networkService, type FunctionsEgress } from './network-service.ts';
import { EGRESS_BINDING, METRICS_SECRET_BINDING } from './isolate/contract.ts';

/** What the runtime puts into a workerd `external` service for an r2Bucket binding. */
export interface WorkerdR2Service {
  address: string;
  injectRequestHeaders: { name: string; value: string }[];
}

/** How the functions runtime reads one bucket's large bodies itself (the R2 wire backend's localReads). */
export interface LocalReads {
  /** The bucket's blob directory, handed read-only to the isolates of scripts bound to it. */
  directory: string;
  /** The hidden r2Bucket binding whose gets may be answered with a file instead of bytes. */
  service: WorkerdR2Service;
  /** The custom metadata key under which such a get's answer names the file (relative to `directory`). */
  metadataKey: string;
  /** Set when the server marks gets whose objects isolates may cache (isolate/r2-cache.ts). */
  cacheableKey?: string | undefined;
}

/**
 * How a bucket binding reaches the storage backend (the R2 wire protocol): see r2.md section 2. The
 * R2 product's wire backend implements it; the engine knows only this shape.
 */
export interface R2ServiceResolver {
  workerdService(accountId: string, bucketName: string): WorkerdR2Service;
  /** Set when a bucket's blobs are files here that bound isolates may read themselves (isolate/local-body.ts). */
  localReads?(accountId: string, bucketName: string): LocalReads | undefined;
  /**
   * Set when isolates may cache small objects (isolate/r2-cache.ts): `listener` runs after each write to an object
   * an isolate may hold, and the write is answered once it resolved (storage/object-changes.ts); without a
   * bucket and keys, every cached object must go; `lists`: the bucket's cached listings too.
   */
  onObjectsChanged?(
    listener: (
      bucket: { accountId: string; name: string } | undefined,
      keys: string[] | undefined,
      lists?: boolean,
    ) => Promise<void>,
  ): void;
}

export interface ConfigInput {
  scripts: ScriptToRun[];
  r2: R2ServiceResolver;
  /** Functions answer at <script>.<subdomain>.<domain>. */
  domain: string;
  /** The newest compatibility date this workerd binary knows; later dates are clamped to it. */
  maxCompatibilityDate: string;
  /**
   * `router` (serving): the entry router owns the socket, or the script itself when only one is routed.
   * `single` (upload check): the only script owns it, unguarded.
   */
  mode: 'router' | 'single';
  /** Absolute path of the tail flags; each script is served its own directory in it, read-only (tail-traces.ts). */
  tailFlagsDir: string;
  /** What functions' fetch() and connect() may reach (workerd's `internet` service); unrestricted without. */
  egress?: FunctionsEgress | undefined;
  /** Adds the "ping" socket the watchdog probes; each process binds it where --socket-addr says. */
  ping?: boolean;
  /** fetch() calls one invocation may make (isolate/subrequests.ts). */
  subrequestsPerInvocation?: number | undefined;
}

/** A backend process's socket as the front processes reach it (see FunctionsRuntime: slots). */
export interface FrontSlot {
  /** The binding `S<index>` the routes table names. */
  index: number;
  /** `unix:<path>` of the backend's listening socket. */
  address: string;
}

/** workerd's compatibility flag that makes `node:async_hooks` (AsyncLocalStorage) importable. */
const ALS_FLAG = 'nodejs_als';
/**
 * V8 flags for workerd. The stalls that set GET 1 KiB's p99 are full collections: the C++ objects behind
 * each request (requests, headers, R2 results, I/O contexts) are only freed by a full collection, whose
 * pause grows with the garbage it finalizes (~4-5 ms per MB of heap, --trace-gc-nvp; V8's own phases are
 * a tenth of it). Measured with bench/functions (docs/benchmarks-history.md, 2026-11-22):
 * - `--initial-heap-size=2`: the first full collection otherwise waits for the initial 32 MiB limit and
 *   then stalls each isolate 180-400 ms, 10-40 s into a load (p99 130-215 ms in that 10 s round). With
 *   it, every full collection happens at ~10 MB of heap: 30-60 ms.
 * - `--optimize-for-size`: V8's conservative heap growth; pauses a little shorter again (p99 39-46 ms
 *   against 37-61 ms without it, alternating runs), throughput unchanged.
 * - `--minor-ms` (2026-11-26): young collections by mark-sweep instead of the copying scavenger. With the
 *   scavenger the remaining stalls were full collections that began by finishing the C++ heap's sweep on
 *   the main thread: the destructors of every Response, Headers and stream since the one before, 40-60 ms
 *   in one piece every ~0.7 s per process under load (perf samples aligned with a client's stalled
 *   requests). With mark-sweep young collections p99 at wrk -c32 went from 28.4 to 13.1 ms for GET 1 KiB,
 *   22.4 to 13.5 for head() and 19.7 to 11.1 for list(), with req/s within the noise (-3.9% to +4.2%) and
 *   ~17% less RSS per process under load (docs/benchmarks.md, "Functions: small requests").
 * - `--max-semi-space-size=8`: the young generation's limit. 2 MiB suited the scavenger (a process settled
 *   at ~185 MiB instead of ~310 MiB under load, 2026-11-22); with mark-sweep young collections a 2 MiB one
 *   collected so often that head() and list() lost 14% of their req/s, and 8 MiB keeps them level.
 * The front processes (which run only the entry router) get these alone; processes that run functions
 * also get the per-isolate heap limit below.
 */
const WORKERD_V8_FLAGS = ['--max-semi-space-size=8', '--initial-heap-size=2', '--optimize-for-size', '--minor-ms'];
/** Processes that run functions also cap each isolate's heap (see limits.ts). */
export const FUNCTION_V8_FLAGS = [...WORKERD_V8_FLAGS, `--max-old-space-size=${ISOLATE_MEMORY_MIB}`];
/** Scripts uploaded without a date get the oldest behaviour, as on Cloudflare. */
const DEFAULT_COMPATIBILITY_DATE = '2021-11-03';
const MODULE_FIELD = {
  esModule: 'esModule',
  commonJs: 'commonJsModule',
  text: 'text',
  data: 'data',
  wasm: 'wasm',
  json: 'json',
} as const;

/**
 * Writes a workerd configuration for `input.scripts` into `dir` (config.capnp + one file per module,
 * embedded by relative path) and returns the config path. The socket is named "http"; the supervisor
 * passes it as an inherited fd.
 */
export function writeWorkerdConfig(dir: string, input: ConfigInput): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const services: string[] = [];
  const r2Services = new Map<string, string>();
  const routes: Record<string, string> = {};
  const routerBindings: string[] = [];
  // Lets the ping service (and only it) ask each script's isolate for its request counts: see isolate/metrics.ts.
  const metricsSecret = randomUUID();
  const metricsScripts: Record<string, { a: string; s: string }> = {};
  const pingBindings: string[] = [];

  // Scripts reachable by Host are served, and scripts with Cron Triggers are loaded for their scheduled()
  // handler (as on Cloudflare, workers_dev = false does not stop crons); when exactly one script is loaded
  // and it is routed, the socket goes to it directly.
  const scripts = input.mode === 'router' ? input.scripts.filter(isLoaded) : input.scripts;
  // A script with assets is reached through its `assets` service, which has no Host guard: behind the router.
  const direct =
    input.mode === 'router' && scripts.length === 1 && scripts[0]!.script.workers_dev && !scripts[0]!.assets;
  const domain = input.domain.toLowerCase();

  // The platform's own bindings of each script, least privilege (hidden-bindings.ts).
  const hiddenServices = new Map<string, string>();
  const network = input.egress ? functionsNetwork(input.egress) : undefined;
  const egress = egressRules(network);
  // The platform's modules are the same for every script: written once, embedded by each.
  const platformModule = (name: IsolateModule) => {
    const moduleName = platformModuleName(name);
    const path = join(dir, moduleName);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, isolateModule(name), { mode: 0o600 });
    return `(name = ${capnpString(moduleName)}, esModule = embed ${capnpString(moduleName)})`;
  };
  const scriptModules = SCRIPT_MODULES.map(platformModule);

  scripts.forEach((deployed, index) => {
    const { script, version, secrets } = deployed;
    const binding = `S${index}`;
    const serviceName = `${script.account_id}/${script.name}`;
    let date = version.compatibility_date ?? DEFAULT_COMPATIBILITY_DATE;
    if (date > input.maxCompatibilityDate) date = input.maxCompatibilityDate;
    const flags = capnpList(withAsyncLocalStorage(version.compatibility_flags).map(capnpString));
    // An assets-only version: workerd's assets service alone answers its host.
    if (deployed.assets && version.main_module === '') {
      const assetsName = `${serviceName}#assets`;
      services.push(
        `(name = ${capnpString(assetsName)}, assets = (path = ${capnpString(deployed.assets.directory)}, ` +
          `config = ${capnpString(deployed.assets.config)}, compatibilityDate = ${capnpString(date)}, compatibilityFlags = ${flags}))`,
      );
      if (script.workers_dev) {
        routes[`${script.name}.${deployed.subdomain}`] = binding;
        routerBindings.push(`(name = ${capnpString(binding)}, service = ${capnpString(assetsName)})`);
      }
      return;
    }
    const hidden = hiddenBindings(deployed, input);
    for (const [name, service] of hidden.services) hiddenServices.set(name, service);
    const folder = `s${index}`;
    const file = (name: string, content: Buffer | string) => {
      const path = join(dir, folder, name);
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, content, { mode: 0o600 });
      return capnpString(`${folder}/${name}`);
    };
    const hostGuard = direct ? { host: `${script.name}.${deployed.subdomain}.${domain}`, domain } : undefined;
    const params = paramsModule({
      accountId: script.account_id,
      scriptName: script.name,
      subrequestLimit: input.subrequestsPerInvocation ?? DEFAULT_SUBREQUESTS_PER_INVOCATION,
      localBodyKey: hidden.localBodyKey,
      localBuckets: hidden.localBuckets,
      localCache: hidden.localCache,
    });
    const modules = [
      `(name = ${capnpString(WRAPPER)}, esModule = embed ${file(WRAPPER, wrapperSource(version.main_module, hostGuard))})`,
      ...scriptModules,
      `(name = ${capnpString(PARAMS_MODULE)}, esModule = embed ${file(PARAMS_MODULE, params)})`,
      ...version.modules.map(
        (m) =>
          `(name = ${capnpString(m.name)}, ${MODULE_FIELD[m.type]} = embed ${file(m.name, Buffer.from(m.content, 'base64'))})`,
      ),
    ];
    const bindings: string[] = [];
    for (const binding of version.bindings) {
      if (binding.type === 'r2_bucket') {
        const r2Name = `r2:${script.account_id}/${binding.bucket_name}`;
        if (!r2Services.has(r2Name))
          r2Services.set(
            r2Name,
            externalService(r2Name, input.r2.workerdService(script.account_id, binding.bucket_name)),
          );
        bindings.push(`(name = ${capnpString(binding.name)}, r2Bucket = ${capnpString(r2Name)})`);
      } else if (binding.type === 'plain_text') {
        bindings.push(`(name = ${capnpString(binding.name)}, text = ${capnpString(binding.text)})`);
      } else {
        bindings.push(`(name = ${capnpString(binding.name)}, json = ${capnpString(JSON.stringify(binding.json))})`);
      }
    }
    // The assets binding fetches files only (workerd's `AssetWorker` entrypoint), never the script again.
    const assetsName = deployed.assets ? `${serviceName}#assets` : undefined;
    if (assetsName && deployed.assets?.binding)
      bindings.push(
        `(name = ${capnpString(deployed.assets.binding)}, service = (name = ${capnpString(assetsName)}, entrypoint = "AssetWorker"))`,
      );
    bindings.push(...hidden.bindings);
    // Kept from user code by the modules that take them (isolate/contract.ts METRICS_SECRET_BINDING).
    bindings.push(`(name = ${capnpString(METRICS_SECRET_BINDING)}, text = ${capnpString(metricsSecret)})`);
    if (egress) bindings.push(`(name = ${capnpString(EGRESS_BINDING)}, json = ${capnpString(JSON.stringify(egress))})`);
    const bound = new Set(version.bindings.map((b) => b.name));
    for (const secret of secrets) {
      if (!bound.has(secret.name))
        bindings.push(`(name = ${capnpString(secret.name)}, text = ${capnpString(secret.text)})`);
    }
    services.push(
      `(name = ${capnpString(serviceName)}, worker = (modules = ${capnpList(modules)}, compatibilityDate = ${capnpString(date)}, ` +
        `compatibilityFlags = ${flags}, bindings = ${capnpList(bindings)}))`,
    );
    // With assets, requests go to workerd's assets router, which calls the script as run_worker_first and
    // the files say (its userWorker); other events (scheduled) still reach the script itself.
    if (assetsName && deployed.assets)
      services.push(
        `(name = ${capnpString(assetsName)}, assets = (path = ${capnpString(deployed.assets.directory)}, ` +
          `config = ${capnpString(deployed.assets.config)}, userWorker = ${capnpString(serviceName)}))`,
      );
    if (script.workers_dev) {
      routes[`${script.name}.${deployed.subdomain}`] = binding;
      routerBindings.push(`(name = ${capnpString(binding)}, service = ${capnpString(assetsName ?? serviceName)})`);
    }
    // The ping service reaches every loaded script: metrics, and scheduled() for Cron Triggers.
    metricsScripts[binding] = { a: script.account_id, s: script.name };
    pingBindings.push(`(name = ${capnpString(binding)}, service = ${capnpString(serviceName)})`);
  });

  let entry: string;
  if (input.mode === 'router' && !direct) {
    writeFileSync(join(dir, 'entry-router.js'), isolateModule('entry-router'), { mode: 0o600 });
    const bindings = [
      `(name = "ROUTES", json = ${capnpString(JSON.stringify(routes))})`,
      `(name = "DOMAIN", text = ${capnpString(domain)})`,
      ...routerBindings,
    ];
    services.unshift(
      `(name = "ledge-router", worker = (modules = [(name = "entry-router.js", esModule = embed "entry-router.js")], ` +
        `compatibilityDate = "2025-01-01", bindings = ${capnpList(bindings)}))`,
    );
    entry = 'ledge-router';
  } else {
    const only = scripts[0];
    if (!only) throw new Error('single mode needs one script');
    entry = `${only.script.account_id}/${only.script.name}`;
  }
  services.push(...r2Services.values(), ...hiddenServices.values());
  if (network) services.push(networkService(network));
  const sockets = [`(name = "http", address = "127.0.0.1:0", http = (), service = ${capnpString(entry)})`];
  if (input.ping) {
    const modules = PING_MODULES.map(platformModule);
    const bindings = [
      `(name = "SCRIPTS", json = ${capnpString(JSON.stringify(metricsScripts))})`,
      `(name = "SECRET", text = ${capnpString(metricsSecret)})`,
      ...pingBindings,
    ];
    services.push(
      `(name = "ledge-ping", worker = (modules = ${capnpList(modules)}, compatibilityDate = "2025-01-01", bindings = ${capnpList(bindings)}))`,
    );
    // The address is a placeholder: every process gets its own unix socket with --socket-addr.
    sockets.push(`(name = "ping", address = "127.0.0.1:0", http = (), service = "ledge-ping")`);
  }
  return writeConfigFile(dir, services, sockets, FUNCTION_V8_FLAGS);
}

/**
 * The config of the front processes: the entry router owns the functions socket and forwards each request
 * by Host to its script's backend process over a unix socket (an external service per slot). The routing
 * table is not in the config: the router re-reads `<routesDir>/routes.json` (a read-only disk service), so
 * a redeploy points a host at a new slot without restarting the front. A forward that fails, because the
 * backend was killed for exceeding a limit, is answered with Cloudflare's 1102.
 */
export function writeFrontConfig(
  dir: string,
  input: { domain: string; slots: FrontSlot[]; routesDir: string },
): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'entry-router.js'), isolateModule('entry-router'));
  const bindings: string[] = [];
  const services: string[] = [];
  for (const slot of input.slots) {
    bindings.push(`(name = ${capnpString(`S${slot.index}`)}, service = ${capnpString(`slot-${slot.index}`)})`);
    services.push(
      `(name = ${capnpString(`slot-${slot.index}`)}, external = (address = ${capnpString(slot.address)}, http = ()))`,
    );
  }
  services.unshift(
    `(name = "ledge-router", worker = (modules = [(name = "entry-router.js", esModule = embed "entry-router.js")], ` +
      `compatibilityDate = "2025-01-01", bindings = ${capnpList([
        `(name = "ROUTES", json = "{}")`,
        `(name = "ROUTES_FILE", service = "ledge-routes")`,
        `(name = "DOMAIN", text = ${capnpString(input.domain.toLowerCase())})`,
        `(name = "FRONT", json = "true")`,
        ...bindings,
      ])}))`,
  );
  services.push(`(name = "ledge-routes", disk = (path = ${capnpString(input.routesDir)}, writable = false))`);
  const sockets = [`(name = "http", address = "127.0.0.1:0", http = (), service = "ledge-router")`];
  return writeConfigFile(dir, services, sockets, WORKERD_V8_FLAGS);
}

/** What the front processes route: `<script>.<subdomain>` -> `S<slot>`, and the hosts of quarantined scripts. */
export interface FrontRoutes {
  routes: Record<string, string>;
  quarantined: Record<string, true>;
}

/** Replaces `<routesDir>/routes.json` atomically (the routers read it while it changes). */
export function writeFrontRoutes(routesDir: string, table: FrontRoutes): void {
  mkdirSync(routesDir, { recursive: true, mode: 0o700 });
  const temporary = join(routesDir, `.routes-${randomUUID()}.json`);
  writeFileSync(temporary, JSON.stringify(table), { mode: 0o600 });
  renameSync(temporary, join(routesDir, 'routes.json'));
}

function writeConfigFile(dir: string, services: string[], sockets: string[], v8Flags: string[]): string {
  const config = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${services.join(',\n    ')}
  ],
  sockets = [ ${sockets.join(', ')} ],
  v8Flags = ${capnpList(v8Flags.map(capnpString))},
);
`;
  const path = join(dir, 'config.capnp');
  writeFileSync(path, config, { mode: 0o600 });
  return path;
}

/** The trace shim imports node:async_hooks: available with nodejs_compat, else through nodejs_als. */
function withAsyncLocalStorage(flags: string[]): string[] {
  return flags.some((f) => f === ALS_FLAG || f.startsWith('nodejs_compat')) ? flags : [...flags, ALS_FLAG];
}
