import type { Binding, WorkerModule } from './schemas.ts';
import type { DurableObjectClass, RemoteObjectClass } from '../workerd/index.ts';
import type { VersionAssets } from './assets/schemas.ts';

export interface ScriptRecord {
  account_id: string;
  name: string;
  tag: string;
  current_deployment_id: string | null;
  workers_dev: boolean;
  previews_enabled: boolean;
  settings: ScriptSettings;
  last_deployed_from: string;
  created_on: string;
  modified_on: string;
  /** The tag of the last Durable Object migration applied to it (wrangler reads it before a deploy). */
  migration_tag?: string | null;
}

/** Settings that do not change the code (PATCH script-settings). */
export interface ScriptSettings {
  logpush?: boolean;
  observability?: Record<string, unknown> | null;
  tags?: string[] | null;
  tail_consumers?: unknown[] | null;
}

export interface VersionRecord {
  id: string;
  account_id: string;
  script_name: string;
  number: number;
  main_module: string;
  modules: WorkerModule[];
  bindings: Binding[];
  compatibility_date: string | null;
  compatibility_flags: string[];
  /** `limits.cpu_ms` as uploaded; null: the default (DEFAULT_CPU_MS). */
  cpu_ms: number | null;
  etag: string;
  source: string;
  author_email: string | null;
  created_on: string;
  /** Static assets (their manifest, serving config and binding), or null. */
  assets: VersionAssets | null;
}

export interface DeploymentRecord {
  id: string;
  account_id: string;
  script_name: string;
  version_id: string;
  source: string;
  author_email: string | null;
  annotations: Record<string, unknown>;
  created_on: string;
}

export interface SecretRecord {
  name: string;
  type: 'secret_text';
  /** Decrypted value: only ever handed to the runtime, never to an API response. */
  text: string;
}

/** Everything the runtime needs to serve one deployed script. */
export interface DeployedScript {
  script: ScriptRecord;
  version: VersionRecord;
  secrets: SecretRecord[];
  subdomain: string;
  /** It has Cron Triggers: the runtime loads it even when it is not routed on workers.dev. */
  scheduled: boolean;
  /** A Workers route or Custom Domain names it (src/worker-routes/): loaded even when not on workers.dev. */
  routed?: boolean | undefined;
  /** Only while an upload is checked: its source maps by part name (`<module>.map`), for the load error. */
  sourceMaps?: Record<string, string> | undefined;
  /** The Durable Object classes the script hosts. */
  durableObjects?: DurableObjectClass[] | undefined;
  /** The other scripts' classes its `script_name` bindings name. */
  remoteObjects?: RemoteObjectClass[] | undefined;
  /** The version's assets as the runtime serves them (assets/served-assets.ts), once written to a directory. */
  assets?: { directory: string; config: string; binding?: string | undefined } | undefined;
}
