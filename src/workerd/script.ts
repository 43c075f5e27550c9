/**
 * What the runtime runs: one script as the functions product hands it over (the product's deployed script
 * records are a superset of this). The engine reads only these fields.
 */

/** CPU time one invocation may use when the upload sets no `limits.cpu_ms` (Cloudflare's default). */
export const DEFAULT_CPU_MS = 30_000;

/** The bindings a script may have (secrets come apart, as text bindings). */
export type Binding =
  | { name: string; type: 'r2_bucket'; bucket_name: string; jurisdiction?: string }
  | { name: string; type: 'kv_namespace'; namespace_id: string }
  | { name: string; type: 'plain_text'; text: string }
  | { name: string; type: 'json'; json: unknown }
  | { name: string; type: 'durable_object_namespace'; class_name: string; script_name?: string | undefined }
  | { name: string; type: 'd1'; id: string }
  | { name: string; type: 'service'; service: string; entrypoint?: string | undefined }
  | { name: string; type: 'queue'; queue_name: string; queue_id: string }
  | { name: string; type: 'workflow'; workflow_name: string; class_name: string; script_name?: string | undefined };

/**
 * A Durable Object class the script exports and a migration created: its objects live under
 * `namespace_id`, which stays the same when the class is renamed or transferred (their storage key).
 */
export interface DurableObjectClass {
  class_name: string;
  namespace_id: string;
  /** Created by `new_sqlite_classes`: `ctx.storage.sql` is available. */
  sqlite: boolean;
}

/** A Durable Object class another script of the account hosts, as a `script_name` binding reaches it. */
export interface RemoteObjectClass {
  script_name: string;
  class_name: string;
  namespace_id: string;
}

export const ModuleTypes = {
  esModule: 'application/javascript+module',
  commonJs: 'application/javascript',
  text: 'text/plain',
  data: 'application/octet-stream',
  wasm: 'application/wasm',
  json: 'application/json',
} as const;
export type ModuleType = keyof typeof ModuleTypes;

export interface WorkerModule {
  name: string;
  type: ModuleType;
  /** base64 of the module bytes (modules may be binary: wasm, data). */
  content: string;
}

/** Everything the runtime needs to serve one deployed script. */
export interface ScriptToRun {
  script: { account_id: string; name: string; workers_dev: boolean };
  version: {
    id: string;
    main_module: string;
    modules: WorkerModule[];
    bindings: Binding[];
    compatibility_date: string | null;
    compatibility_flags: string[];
    /** `limits.cpu_ms` as uploaded; null: the default (DEFAULT_CPU_MS). */
    cpu_ms: number | null;
  };
  /** Decrypted secrets: text bindings. */
  secrets: { name: string; text: string }[];
  subdomain: string;
  /** It has Cron Triggers: the runtime loads it even when it is not routed on workers.dev. */
  scheduled: boolean;
  /** A Workers route or Custom Domain names it: the traffic port reaches it through the entry router. */
  routed?: boolean | undefined;
  /**
   * Static assets, served by workerd's own `assets` service in front of the script (or alone, when the
   * version has no code): the version's directory, written before the config (the config only names it),
   * workerd's assets config JSON, and the name of the binding that fetches them.
   */
  assets?: { directory: string; config: string; binding?: string | undefined } | undefined;
  /** The Durable Object classes the script hosts (its namespaces); none: it hosts no objects. */
  durableObjects?: DurableObjectClass[] | undefined;
  /**
   * The classes of other scripts of its account that its `script_name` bindings name, with their namespace
   * ids (remote-objects.ts); a binding whose class is not there (deleted since) reaches nothing.
   */
  remoteObjects?: RemoteObjectClass[] | undefined;
  /**
   * Entrypoints of this script that other scripts of its account bind to (`default` for the default export),
   * set by the runtime (service-sockets.ts): each is served on a socket of its own, and a script so bound is
   * loaded even when it is neither routed nor scheduled.
   */
  entrypoints?: string[] | undefined;
  /** The queues it consumes, names by id: its queue relay hands each batch over under the queue's name. */
  consumedQueues?: Record<string, string> | undefined;
  /** Only while an upload is checked: its source maps by part name (`<module>.map`), for the load error. */
  sourceMaps?: Record<string, string> | undefined;
}

/** A script the runtime runs: on workers.dev, on a route or Custom Domain, woken by its Cron Triggers, or bound by another script. */
export const isLoaded = (d: ScriptToRun): boolean =>
  d.script.workers_dev ||
  d.scheduled ||
  d.routed === true ||
  (d.entrypoints?.length ?? 0) > 0 ||
  hostedWorkflows(d).length > 0;

type WorkflowBinding = Extract<Binding, { type: 'workflow' }>;

/**
 * The Workflows the script runs itself: those its bindings name without another script (a Workflow's
 * instances run beside the class, in the process of the script that exports it). Its instances wake on
 * their own (sleeps, retries), so such a script is loaded whether or not anything routes to it.
 */
export const hostedWorkflows = (d: ScriptToRun): WorkflowBinding[] =>
  d.version.bindings.filter(
    (b): b is WorkflowBinding =>
      b.type === 'workflow' && (b.script_name === undefined || b.script_name === d.script.name),
  );

/**
 * The entry router's key for a script reached through a Workers route or Custom Domain, and the value of
 * ROUTED_SCRIPT_HEADER the traffic port sends for it. `routeKey` is a per-installation secret: the key cannot
 * be guessed from the functions port, where only workers.dev hosts are meant to answer.
 */
export const routedScriptKey = (routeKey: string, accountId: string, name: string): string =>
  `${routeKey}@${accountId}/${name}`;

/** Whether a loaded script runs in this node's runtime, and the last failure to start it. */
export interface ScriptRuntimeStatus {
  /** `running` (its version_id serves), or `failed`: it could not start, and its host answers 503 (1101). */
  state: 'running' | 'failed';
  version_id: string;
  /** The last configuration of it that failed to start (a newer deploy that failed, while this one serves). */
  failure?: { reason: string; at: string };
}

/** What a reload did: the scripts (`<account>/<script>`) whose new configuration failed to start, and why. */
export interface ReloadReport {
  failed: ReadonlyMap<string, string>;
}
