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
  | { name: string; type: 'json'; json: unknown };

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
  /**
   * Static assets, served by workerd's own `assets` service in front of the script (or alone, when the
   * version has no code): the version's directory, written before the config (the config only names it),
   * workerd's assets config JSON, and the name of the binding that fetches them.
   */
  assets?: { directory: string; config: string; binding?: string | undefined } | undefined;
  /** Only while an upload is checked: its source maps by part name (`<module>.map`), for the load error. */
  sourceMaps?: Record<string, string> | undefined;
}

/** A script the runtime runs: routed on workers.dev, or woken by its Cron Triggers. */
/** Bindings to a resource (a bucket, a namespace), which do not count among a script's variables. */
export const isResourceBinding = (b: Binding): boolean => b.type === 'r2_bucket' || b.type === 'kv_namespace';

export const isLoaded = (d: ScriptToRun): boolean => d.script.workers_dev || d.scheduled;

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
