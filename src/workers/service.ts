import { createHash, randomUUID } from 'node:crypto';
import type { AccountService } from '../accounts/index.ts';
import { clip } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { isoNow } from '../shared/time.ts';
import { MissingDurableObjectClassError, type ReloadReport, type ScriptRuntimeStatus } from '../workerd/index.ts';
import { DurableObjectErrors } from './durable-objects/errors.ts';
import { WorkerErrors } from './errors.ts';
import type { AssetsService } from './assets/service.ts';
import {
  remoteClasses,
  runtimeClasses,
  type DurableObjectsService,
  type PreparedClasses,
} from './durable-objects/service.ts';
import type { AssetManifest, VersionAssets } from './assets/schemas.ts';
import {
  MAX_SCRIPTS_PER_ACCOUNT,
  checkVariableCount,
  checkVariableSize,
  isVariable,
  normalizeAnnotations,
} from './limits.ts';
import { SCRIPT_NAME, SUBDOMAIN, type Binding, type ScriptAndVersionSettings, type SecretsBulk } from './schemas.ts';
import { tailProducersOf, withoutConsumer } from './script-references.ts';
import { checkWorkflowBindings, workflowTargets } from './workflow-bindings.ts';
import type { WorkerStore } from './store.ts';
import type {
  DeployedScript,
  DeploymentRecord,
  ScriptRecord,
  ScriptSettings,
  SecretRecord,
  VersionRecord,
} from './types.ts';
import {
  checkBindingName,
  checkCompatibilityDate,
  checkCompatibilityFlags,
  parseBindings,
  type ScriptUpload,
} from './upload.ts';
import type { Clock } from '../shared/clock.ts';

export type { ReloadReport, ScriptRuntimeStatus };

/** What the service needs from the function runtime (the workerd engine's FunctionsRuntime). */
export interface FunctionRuntime {
  /** Loads one script alone in a throwaway workerd as the runtime will; resolves with why it failed, if it did. */
  check(candidate: DeployedScript): Promise<string | undefined>;
  /**
   * Brings the runtime in line with the deployments. A script that fails to start fails alone: it is in the
   * report, and every other script goes on.
   */
  reload(): Promise<ReloadReport>;
  /** http://<script>.<subdomain>.<domain>:<port>, once the functions socket is open. */
  functionUrl(script: string, subdomain: string): string | undefined;
  /** The account's loaded scripts on this node, by name. */
  status(accountId: string): Map<string, ScriptRuntimeStatus>;
}

/** Looks up R2 buckets so a binding to a missing bucket is refused at upload time. */
export interface BucketLookup {
  bucketExists(accountId: string, name: string): Promise<boolean>;
}

/** Looks up D1 databases: a binding reaches only a database of the script's own account. */
/** Queues (src/queues): a producer binding names a queue of the uploader's account by name. */
export interface QueueLookup {
  queueId(accountId: string, name: string): Promise<string | undefined>;
}

export interface DatabaseLookup {
  databaseExists(accountId: string, id: string): Promise<boolean>;
}

/** Whether an account has a KV namespace (src/kv), for the bindings of an upload. */
export interface KvNamespaceLookup {
  namespaceExists(accountId: string, namespaceId: string): Promise<boolean>;
}

export interface Caller {
  email: string;
  source: string;
}

/** Scripts, versions, deployments, secrets and workers.dev subdomains of every account. */
export class WorkersService {
  readonly store: WorkerStore;
  readonly #runtime: FunctionRuntime;
  readonly #buckets: BucketLookup;
  readonly #databases: DatabaseLookup | undefined;
  readonly #kvNamespaces: KvNamespaceLookup | undefined;
  readonly #queues: QueueLookup | undefined;
  readonly #accounts: AccountService;
  readonly #maxScripts: number;
  readonly assets: AssetsService | undefined;
  readonly durableObjects: DurableObjectsService | undefined;
  readonly #onDeleted: Array<(accountId: string, name: string) => Promise<void> | void> = [];

  readonly #clock: Clock;

  constructor(
    deps: {
      store: WorkerStore;
      runtime: FunctionRuntime;
      buckets: BucketLookup;
      /** Without it, a d1 binding is refused (no D1 on this server). */
      databases?: DatabaseLookup | undefined;
      /** KV namespaces; without it, an upload with a kv_namespace binding is refused. */
      kvNamespaces?: KvNamespaceLookup | undefined;
      /** Queues; without it, an upload with a queue binding is refused. */
      queues?: QueueLookup | undefined;
      accounts: AccountService;
      /** Scripts one account may have (Cloudflare's "Number of Workers"). */
      maxScriptsPerAccount?: number | undefined;
      /** Static assets; without it, an upload with assets is refused. */
      assets?: AssetsService | undefined;
      /** Durable Object namespaces; without it, their bindings and migrations are refused. */
      durableObjects?: DurableObjectsService | undefined;
    },
    clock: Clock,
  ) {
    this.#clock = clock;
    this.assets = deps.assets;
    this.durableObjects = deps.durableObjects;
    this.#maxScripts = deps.maxScriptsPerAccount ?? MAX_SCRIPTS_PER_ACCOUNT;
    this.store = deps.store;
    this.#runtime = deps.runtime;
    this.#queues = deps.queues;
    this.#buckets = deps.buckets;
    this.#databases = deps.databases;
    this.#kvNamespaces = deps.kvNamespaces;
    this.#accounts = deps.accounts;
  }

  /** The runtime's upload check; a Durable Object class the script does not export is Cloudflare's 10070. */
  async #checkLoads(candidate: DeployedScript): Promise<string | undefined> {
    try {
      return await this.#runtime.check(candidate);
    } catch (error) {
      if (error instanceof MissingDurableObjectClassError) throw DurableObjectErrors.notExported(error.className);
      throw error;
    }
  }

  /** Checks the upload's Durable Object bindings and migrations; undefined when it has neither. */
  async #prepareDurableObjects(
    accountId: string,
    name: string,
    bindings: Binding[],
    upload: ScriptUpload,
    deploy: boolean,
    now: string,
  ): Promise<PreparedClasses | undefined> {
    const bound = bindings.some((b) => b.type === 'durable_object_namespace');
    if (!this.durableObjects) {
      if (bound || upload.migrations)
        throw WorkerErrors.invalidScript('Durable Objects are not enabled on this server.');
      return undefined;
    }
    return this.durableObjects.prepare({
      accountId,
      script: name,
      bindings,
      migrations: upload.migrations,
      deploy,
      now,
      bindingsOf: async (script) => {
        const record = await this.store.getScript(accountId, script);
        return (record && (await this.currentVersion(record)))?.bindings ?? [];
      },
      scriptExists: async (script) => (await this.store.getScript(accountId, script)) !== undefined,
    });
  }

  /** The static assets the new version serves: the session's files, or the previous version's (keep_assets). */
  async #versionAssets(
    accountId: string,
    upload: ScriptUpload,
    previous: VersionRecord | undefined,
  ): Promise<VersionAssets | null> {
    if (!upload.assets && !upload.keepAssets) return null;
    if (!this.assets) throw WorkerErrors.invalidScript('Static assets are not enabled on this server.');
    const kept = upload.keepAssets ? previous?.assets : undefined;
    let manifest: AssetManifest;
    if (upload.assets?.jwt) manifest = await this.assets.completedManifest(accountId, upload.assets.jwt);
    else if (kept) manifest = kept.manifest;
    else if (upload.keepAssets)
      throw WorkerErrors.invalidScript('keep_assets is set, but the current version has no assets to keep.');
    else
      throw WorkerErrors.invalidScript(
        'assets.jwt is required: start an assets upload session and send its completion token.',
      );
    const config = upload.assets?.jwt || !kept ? (upload.assets?.config ?? {}) : (upload.assets?.config ?? kept.config);
    const binding = upload.assets ? upload.assets.binding : kept?.binding;
    return { manifest, config, ...(binding !== undefined ? { binding } : {}) };
  }

  /** Today's UTC date (YYYY-MM-DD) on the platform's clock: the latest compatibility date a script may name. */
  today(): string {
    return isoNow(this.#clock).slice(0, 10);
  }

  async requireScript(accountId: string, name: string): Promise<ScriptRecord> {
    const script = await this.store.getScript(accountId, name);
    if (!script) throw WorkerErrors.scriptNotFound();
    return script;
  }

  async currentVersion(script: ScriptRecord): Promise<VersionRecord | undefined> {
    if (!script.current_deployment_id) return undefined;
    const deployment = await this.store.getDeployment(script.current_deployment_id);
    return deployment && this.store.getVersion(script.account_id, script.name, deployment.version_id);
  }

  /**
   * A producer binding names its queue by name, as wrangler sends it: the version keeps the id of the account's
   * queue of that name, so a queue deleted and made again under the name is a new queue to its producers only
   * once they are deployed again. Another account's queue answers as a missing one.
   */
  async #resolveQueues(accountId: string, bindings: Binding[]): Promise<Binding[]> {
    return Promise.all(
      bindings.map(async (binding) => {
        if (binding.type !== 'queue') return binding;
        const id = await this.#queues?.queueId(accountId, binding.queue_name);
        if (id === undefined) throw WorkerErrors.queueNotFound(binding.name, binding.queue_name);
        return { ...binding, queue_id: id };
      }),
    );
  }

  /**
   * Stores an uploaded version after checking it loads in workerd, and deploys it when `deploy` is set.
   * Nothing is written when any check fails, so the previous deployment keeps serving.
   */
  async upload(accountId: string, name: string, upload: ScriptUpload, caller: Caller, deploy: boolean) {
    if (!SCRIPT_NAME.test(name)) throw WorkerErrors.invalidScriptName(name);
    const existing = await this.store.getScript(accountId, name);
    if (!existing && (await this.store.listScripts(accountId)).length >= this.#maxScripts) {
      throw WorkerErrors.tooManyScripts(this.#maxScripts);
    }
    const previous = existing && (await this.currentVersion(existing));
    const bindings = await this.#resolveQueues(accountId, mergeBindings(upload, previous));
    for (const binding of bindings) {
      if (binding.type === 'r2_bucket' && !(await this.#buckets.bucketExists(accountId, binding.bucket_name))) {
        throw WorkerErrors.invalidScript(
          `Binding "${clip(binding.name)}" refers to the R2 bucket "${clip(binding.bucket_name)}", which does not exist in this account: create it first (ledge bucket create ${clip(binding.bucket_name)}).`,
        );
      }
      // Another account's database answers as a missing one: its id says nothing of whose it is.
      if (binding.type === 'd1' && !(await this.#databases?.databaseExists(accountId, binding.id))) {
        throw WorkerErrors.d1NotFound(binding.name, binding.id);
      }
      if (
        binding.type === 'kv_namespace' &&
        !(await this.#kvNamespaces?.namespaceExists(accountId, binding.namespace_id))
      ) {
        throw WorkerErrors.kvNamespaceNotValid(binding.namespace_id);
      }
    }
    checkWorkflowBindings(name, bindings);
    for (const target of workflowTargets(name, bindings)) {
      if (!(await this.store.getScript(accountId, target.script)))
        throw WorkerErrors.invalidScript(
          `Binding "${clip(target.binding)}" names a Workflow of the Worker "${clip(target.script)}", which does not exist in this account: deploy it first.`,
        );
    }
    for (const binding of bindings) {
      // Looked up in the uploader's account only: another account's Worker is as unknown as a missing one.
      if (
        binding.type === 'service' &&
        binding.service !== name &&
        !(await this.store.getScript(accountId, binding.service))
      )
        throw WorkerErrors.serviceBindingTargetNotFound(binding.name, binding.service);
    }
    const assets = await this.#versionAssets(accountId, upload, previous);
    const now = isoNow(this.#clock);
    const objects = await this.#prepareDurableObjects(accountId, name, bindings, upload, deploy, now);
    const mainContent = upload.modules.find((m) => m.name === upload.mainModule)?.content ?? '';
    const version: Omit<VersionRecord, 'number'> = {
      id: randomUUID(),
      account_id: accountId,
      script_name: name,
      main_module: upload.mainModule,
      modules: upload.modules,
      bindings,
      compatibility_date: upload.compatibilityDate ?? null,
      compatibility_flags: upload.compatibilityFlags,
      cpu_ms: upload.cpuMs ?? null,
      etag: createHash('sha256').update(Buffer.from(mainContent, 'base64')).digest('hex'),
      source: caller.source,
      author_email: caller.email,
      created_on: now,
      assets,
    };
    const script = existing ?? {
      account_id: accountId,
      name,
      tag: newId(),
      current_deployment_id: null,
      workers_dev: false,
      previews_enabled: false,
      settings: {},
      last_deployed_from: caller.source,
      created_on: now,
      modified_on: now,
    };
    const removed = new Set(upload.removeSecrets ?? []);
    const previousSecrets = existing ? await this.store.getSecrets(accountId, name) : [];
    const secrets = previousSecrets.filter((s) => !removed.has(s.name));
    for (const secret of upload.secrets) {
      const index = secrets.findIndex((s) => s.name === secret.name);
      const record = { name: secret.name, type: 'secret_text' as const, text: secret.text };
      if (index >= 0) secrets[index] = record;
      else secrets.push(record);
    }
    checkVariableCount(bindings.filter(isVariable).length + secrets.length);
    // An assets-only Worker has no code to load.
    const failure =
      version.main_module === ''
        ? undefined
        : await this.#checkLoads({
            script,
            version: { ...version, number: 0 },
            secrets,
            subdomain: 'check',
            scheduled: false,
            sourceMaps: upload.sourceMaps,
            durableObjects: objects && runtimeClasses(objects.plan.classes),
            remoteObjects: objects?.remote,
          });
    if (failure !== undefined)
      throw WorkerErrors.scriptFailedToStart(name, failure, Boolean(existing?.current_deployment_id));
    const deployment: DeploymentRecord | undefined = deploy
      ? {
          id: randomUUID(),
          account_id: accountId,
          script_name: name,
          version_id: version.id,
          source: caller.source,
          author_email: caller.email,
          annotations: upload.annotations,
          created_on: now,
        }
      : undefined;
    const stored = await this.store.saveVersion({
      script: { ...script, last_deployed_from: caller.source, modified_on: now },
      version,
      secrets: upload.secrets,
      removeSecrets: [...removed],
      ...(deployment ? { deployment } : {}),
      ...(objects?.plan.changed
        ? {
            durableObjects: {
              tag: objects.plan.tag,
              classes: objects.plan.classes,
              previousTag: objects.previous.tag,
            },
          }
        : {}),
    });
    if (deployment || (upload.secrets.length > 0 && existing?.current_deployment_id)) {
      await this.#reloadFor(accountId, name, async () => {
        if (deployment)
          await this.store.revertDeployment(accountId, name, deployment.id, existing?.current_deployment_id ?? null);
        if (!existing) await this.store.deleteScript(accountId, name);
        else await this.#restoreSecrets(accountId, name, previousSecrets);
        if (existing && objects?.plan.changed)
          await this.durableObjects?.store.restore(accountId, name, objects.previous, objects.takenFrom);
      });
    }
    // A deleted class's objects go once no process hosts it any more (the reload stopped the old one).
    if (objects && objects.plan.deleted.length > 0) await this.durableObjects?.collect(accountId, objects.plan.deleted);
    const saved = (await this.store.getScript(accountId, name))!;
    return { script: saved, version: stored, deployment };
  }

  async deploy(
    accountId: string,
    name: string,
    versionId: string,
    caller: Caller,
    annotations: Record<string, unknown>,
  ) {
    const script = await this.requireScript(accountId, name);
    const version = await this.store.getVersion(accountId, name, versionId);
    if (!version) throw WorkerErrors.versionNotFound(versionId);
    const deployment: DeploymentRecord = {
      id: randomUUID(),
      account_id: accountId,
      script_name: name,
      version_id: version.id,
      source: caller.source,
      author_email: caller.email,
      annotations,
      created_on: isoNow(this.#clock),
    };
    await this.store.addDeployment(deployment);
    await this.#reloadFor(accountId, name, async () => {
      await this.store.revertDeployment(accountId, name, deployment.id, script.current_deployment_id);
    });
    return deployment;
  }

  async deleteDeployment(accountId: string, name: string, id: string) {
    const script = await this.requireScript(accountId, name);
    const deployment = await this.store.getDeployment(id);
    if (!deployment || deployment.account_id !== accountId || deployment.script_name !== name) {
      throw WorkerErrors.deploymentNotFound(id);
    }
    if (script.current_deployment_id === id) throw WorkerErrors.activeDeployment();
    if (!(await this.store.deleteDeployment(accountId, name, id))) throw WorkerErrors.activeDeployment();
  }

  /**
   * Creates a version from the deployed one with `settings` applied, and deploys it (Cloudflare's
   * PATCH .../settings). Listed bindings replace the old ones, secrets included: a secret that is neither
   * sent (secret_text) nor kept (inherit) is removed, as on Cloudflare.
   */
  async editScriptAndVersionSettings(
    accountId: string,
    name: string,
    settings: ScriptAndVersionSettings,
    caller: Caller,
  ) {
    const script = await this.requireScript(accountId, name);
    const current = await this.currentVersion(script);
    if (!current) throw WorkerErrors.notDeployed();
    const [latest] = await this.store.listVersions(accountId, name);
    if (latest && latest.id !== current.id) throw WorkerErrors.latestVersionNotDeployed();
    if (settings.compatibility_date !== undefined) {
      checkCompatibilityDate(settings.compatibility_date, this.today());
    }
    if (settings.compatibility_flags !== undefined) checkCompatibilityFlags(settings.compatibility_flags);
    const upload: ScriptUpload = {
      mainModule: current.main_module,
      modules: current.modules,
      bindings: current.bindings,
      secrets: [],
      inherit: [],
      keepBindings: [],
      compatibilityDate: settings.compatibility_date ?? current.compatibility_date ?? undefined,
      compatibilityFlags: settings.compatibility_flags ?? current.compatibility_flags,
      cpuMs: settings.limits?.cpu_ms ?? current.cpu_ms ?? undefined,
      annotations: normalizeAnnotations(settings.annotations ?? {}),
      keepAssets: current.assets !== null,
    };
    if (settings.bindings) {
      const parsed = parseBindings(settings.bindings);
      const secretNames = await this.store.listSecretNames(accountId, name);
      // Secrets are not part of a version's bindings here: an inherited secret is simply kept.
      const keptSecrets = new Set(parsed.inherit.filter((n) => secretNames.includes(n)));
      const sent = new Set(parsed.secrets.map((s) => s.name));
      upload.bindings = parsed.bindings;
      upload.secrets = parsed.secrets;
      upload.inherit = parsed.inherit.filter((n) => !keptSecrets.has(n));
      upload.removeSecrets = secretNames.filter((n) => !keptSecrets.has(n) && !sent.has(n));
    }
    const result = await this.upload(accountId, name, upload, caller, true);
    const { logpush, observability, tags, tail_consumers } = settings;
    const scriptLevel = Object.fromEntries(
      Object.entries({ logpush, observability, tags, tail_consumers }).filter(([, v]) => v !== undefined),
    );
    if (Object.keys(scriptLevel).length > 0) await this.patchSettings(accountId, name, scriptLevel);
    return result;
  }

  /**
   * Applies a secrets-bulk merge patch in one transaction: every entry is checked before any is written,
   * and the runtime reloads once. Deleting a secret the Worker does not have is a no-op (merge-patch).
   */
  async bulkSecrets(accountId: string, name: string, patch: SecretsBulk['secrets']) {
    const entries = Object.entries(patch);
    if (entries.length > BULK_SECRET_LIMIT) {
      throw WorkerErrors.invalidSecret(
        `${entries.length} secrets in one request: send at most ${BULK_SECRET_LIMIT} per request.`,
      );
    }
    const script = await this.requireScript(accountId, name);
    const version = await this.currentVersion(script);
    const put: { name: string; text: string }[] = [];
    const remove: string[] = [];
    for (const [key, value] of entries) {
      checkBindingName(key, 'Secret');
      if (value === null) {
        remove.push(key);
        continue;
      }
      if (value.name !== key) {
        throw WorkerErrors.invalidSecret(
          `Secret "${clip(key)}" carries the name "${clip(value.name)}": the key and the name must be the same.`,
        );
      }
      if (value.type !== 'secret_text') {
        throw WorkerErrors.invalidSecret(
          `Secret "${clip(key)}" has type "${clip(value.type)}": Ledge stores secret_text secrets only.`,
        );
      }
      if (value.text === undefined) {
        throw WorkerErrors.invalidSecret(`Secret "${clip(key)}" of type secret_text needs a string "text".`);
      }
      checkVariableSize('Secret', key, Buffer.byteLength(value.text));
      const binding = version?.bindings.find((b) => b.name === key);
      if (binding) {
        throw WorkerErrors.invalidSecret(
          `Binding name "${clip(key)}" is already used by a ${binding.type} binding of this Worker.`,
        );
      }
      put.push({ name: key, text: value.text });
    }
    const existing = await this.store.listSecretNames(accountId, name);
    const after = new Set([...existing.filter((n) => !remove.includes(n)), ...put.map((s) => s.name)]);
    const variables = version?.bindings.filter(isVariable).length ?? 0;
    if (after.size > existing.length) checkVariableCount(variables + after.size);
    const changed = put.length > 0 || remove.some((n) => existing.includes(n));
    if (changed) {
      const previousSecrets = await this.store.getSecrets(accountId, name);
      await this.store.applySecrets(accountId, name, put, remove);
      if (script.current_deployment_id) {
        await this.#reloadFor(accountId, name, () => this.#restoreSecrets(accountId, name, previousSecrets));
      }
    }
    return [...after].sort();
  }

  /**
   * Deletes a Worker with everything it owns (versions, deployments, secrets, Cron Triggers and their runs, kept
   * log lines, its workers.dev route). A Worker another script uses as its tail Worker is kept unless `force`,
   * as on Cloudflare; a forced delete also drops it from those scripts' tail_consumers.
   */
  async deleteScript(accountId: string, name: string, force = false) {
    await this.requireScript(accountId, name);
    const producers = tailProducersOf(await this.store.listScripts(accountId), name);
    if (producers.length > 0 && !force)
      throw WorkerErrors.scriptInUse(
        name,
        producers.map((p) => p.producer.script),
      );
    // As on Cloudflare, a Worker others are bound to goes only when forced; their calls then fail.
    const callers = (await this.serviceReferences(accountId, name)).incoming;
    if (callers.length > 0 && !force) throw WorkerErrors.boundAsService(name, callers);
    for (const { producer } of producers) {
      const other = await this.requireScript(accountId, producer.script);
      const consumers = withoutConsumer(other.settings.tail_consumers ?? [], name);
      await this.store.updateSettings(accountId, producer.script, { ...other.settings, tail_consumers: consumers });
    }
    const classes = (await this.durableObjects?.store.forScript(accountId, name))?.classes ?? [];
    if (!(await this.store.deleteScript(accountId, name))) throw WorkerErrors.scriptNotFound();
    await this.#runtime.reload();
    // Its classes' rows went with it (ON DELETE CASCADE); their objects' data goes now that no process hosts them
    // (on several nodes, from the cluster store too).
    await this.durableObjects?.collect(accountId, classes);
    for (const listener of this.#onDeleted) await listener(accountId, name);
  }

  /** Told after a script is deleted (the scheduler drops its crons, the log hub its files). */
  onScriptDeleted(listener: (accountId: string, name: string) => Promise<void> | void): void {
    this.#onDeleted.push(listener);
  }

  /** The scripts whose deployed version binds to `name` as a service (incoming), and those `name` binds to. */
  async serviceReferences(accountId: string, name: string): Promise<{ incoming: string[]; outgoing: string[] }> {
    const target = await this.requireScript(accountId, name);
    const targets = async (script: ScriptRecord) =>
      ((await this.currentVersion(script))?.bindings ?? []).flatMap((b) =>
        b.type === 'service' && b.service !== script.name ? [b.service] : [],
      );
    const incoming: string[] = [];
    for (const script of await this.store.listScripts(accountId)) {
      if (script.name !== name && (await targets(script)).includes(name)) incoming.push(script.name);
    }
    return { incoming, outgoing: [...new Set(await targets(target))] };
  }

  /** The scripts that use `name` as their tail Worker. */
  async tailProducers(accountId: string, name: string) {
    await this.requireScript(accountId, name);
    return tailProducersOf(await this.store.listScripts(accountId), name);
  }

  async putSecret(accountId: string, name: string, secretName: string, text: string) {
    checkBindingName(secretName, 'Secret');
    checkVariableSize('Secret', secretName, Buffer.byteLength(text));
    const script = await this.requireScript(accountId, name);
    const version = await this.currentVersion(script);
    const secretNames = await this.store.listSecretNames(accountId, name);
    if (!secretNames.includes(secretName)) {
      const variables = version?.bindings.filter(isVariable).length ?? 0;
      checkVariableCount(variables + secretNames.length + 1);
    }
    if (version?.bindings.some((b) => b.name === secretName)) {
      throw WorkerErrors.invalidSecret(
        `Binding name "${clip(secretName)}" is already used by a ${version.bindings.find((b) => b.name === secretName)?.type} binding of this Worker.`,
      );
    }
    const previousSecrets = await this.store.getSecrets(accountId, name);
    await this.store.putSecret(accountId, name, secretName, text);
    if (script.current_deployment_id) {
      await this.#reloadFor(accountId, name, () => this.#restoreSecrets(accountId, name, previousSecrets));
    }
  }

  async deleteSecret(accountId: string, name: string, secretName: string) {
    const script = await this.requireScript(accountId, name);
    const previousSecrets = await this.store.getSecrets(accountId, name);
    if (!(await this.store.deleteSecret(accountId, name, secretName))) throw WorkerErrors.secretNotFound(secretName);
    if (script.current_deployment_id) {
      await this.#reloadFor(accountId, name, () => this.#restoreSecrets(accountId, name, previousSecrets));
    }
  }

  async setWorkersDev(accountId: string, name: string, enabled: boolean, previews: boolean) {
    const script = await this.requireScript(accountId, name);
    await this.store.setWorkersDev(accountId, name, enabled, previews);
    if (script.workers_dev !== enabled && script.current_deployment_id) {
      await this.#reloadFor(accountId, name, () =>
        this.store.setWorkersDev(accountId, name, script.workers_dev, script.previews_enabled),
      );
    }
  }

  async patchSettings(accountId: string, name: string, patch: ScriptSettings) {
    const script = await this.requireScript(accountId, name);
    const settings = { ...script.settings, ...patch };
    await this.store.updateSettings(accountId, name, settings);
    return settings;
  }

  async disableWorkersDev(accountId: string, name: string) {
    await this.setWorkersDev(accountId, name, false, false);
  }

  /**
   * The account's workers.dev-style subdomain; the first read assigns one derived from the account name.
   * Undefined once the account gave it up (DELETE), until it registers a new one.
   */
  async subdomain(accountId: string): Promise<string | undefined> {
    const existing = await this.store.getSubdomain(accountId);
    if (existing) return existing;
    if (await this.store.isSubdomainReleased(accountId)) return undefined;
    const account = await this.#accounts.getAccount(accountId);
    const base = slug((account?.name ?? '').replace(/'s account$/i, '')) || 'account';
    const suffixed = `${base.slice(0, 50)}-${accountId.slice(0, 8)}`;
    // The base name unless another account has it (or takes it while we look): then the suffixed one.
    if (!(await this.store.subdomainOwner(base)) && (await this.store.setSubdomain(accountId, base))) return base;
    if (!(await this.store.setSubdomain(accountId, suffixed))) throw WorkerErrors.subdomainTaken(suffixed);
    return suffixed;
  }

  async setSubdomain(accountId: string, subdomain: string) {
    if (!SUBDOMAIN.test(subdomain)) throw WorkerErrors.invalidSubdomain(subdomain);
    const owner = await this.store.subdomainOwner(subdomain);
    if (owner && owner !== accountId) throw WorkerErrors.subdomainTaken(subdomain);
    if (!(await this.store.setSubdomain(accountId, subdomain))) throw WorkerErrors.subdomainTaken(subdomain);
    await this.#runtime.reload();
  }

  /** Gives the subdomain up: the account's Workers stop answering at <script>.<subdomain> until a new one is set. */
  async releaseSubdomain(accountId: string) {
    if (!(await this.store.releaseSubdomain(accountId))) throw WorkerErrors.subdomainNotFound();
    await this.#runtime.reload();
  }

  functionUrl(script: string, subdomain: string): string | undefined {
    return this.#runtime.functionUrl(script, subdomain);
  }

  /** After a committed change of what the runtime loads that is not the scripts' own (routes, domains). */
  async reloadRuntime(): Promise<void> {
    await this.#runtime.reload();
  }

  /**
   * Every deployed script of the account and whether it runs on this node: `running`, `failed` (it could not
   * start: quarantined), or `not_loaded` (deployed, but neither routed on workers.dev nor with Cron Triggers).
   */
  async runtimeStatus(accountId: string) {
    const status = this.#runtime.status(accountId);
    const scripts = await this.store.listScripts(accountId);
    return scripts
      .filter((s) => s.current_deployment_id)
      .map((s) => {
        const runtime = status.get(s.name);
        return {
          script: s.name,
          state: runtime?.state ?? 'not_loaded',
          ...(runtime ? { version_id: runtime.version_id } : {}),
          ...(runtime?.failure ? { failure: runtime.failure } : {}),
        };
      });
  }

  /**
   * Reloads the runtime after a change to one script. When that script fails to start with it, `undo`
   * puts the records back as they were (the runtime keeps what it ran before, or nothing for a new script)
   * and the caller gets a 400 naming the script; other scripts' failures are their own deploys' business.
   */
  async #reloadFor(accountId: string, name: string, undo: () => Promise<unknown>): Promise<void> {
    const report = await this.#runtime.reload();
    const reason = report.failed.get(`${accountId}/${name}`);
    if (reason === undefined) return;
    await undo();
    const after = await this.#runtime.reload();
    const serving =
      (await this.store.getScript(accountId, name))?.current_deployment_id && !after.failed.has(`${accountId}/${name}`);
    throw WorkerErrors.scriptFailedToStart(name, reason, Boolean(serving));
  }

  /** Puts a script's secrets back to `previous` (after a change its script could not start with). */
  async #restoreSecrets(accountId: string, name: string, previous: SecretRecord[]): Promise<void> {
    const now = await this.store.listSecretNames(accountId, name);
    const keep = new Set(previous.map((s) => s.name));
    await this.store.applySecrets(
      accountId,
      name,
      previous.map((s) => ({ name: s.name, text: s.text })),
      now.filter((n) => !keep.has(n)),
    );
  }

  /**
   * Everything deployed, with decrypted secrets: for the runtime configuration only. `scheduled` names the
   * scripts with Cron Triggers (`account/script`), which the runtime loads even when they are not routed, and
   * `routed` those a Workers route or Custom Domain names (served through the traffic port).
   */
  async deployedScripts(
    scheduled: ReadonlySet<string> = new Set(),
    routed: ReadonlySet<string> = new Set(),
  ): Promise<DeployedScript[]> {
    const deployed = await this.store.listDeployed();
    const classes = (await this.durableObjects?.store.all()) ?? new Map();
    const out: DeployedScript[] = [];
    for (const { script, version } of deployed) {
      const subdomain = await this.subdomain(script.account_id);
      out.push({
        // Without a subdomain there is no hostname to answer at: the script stays deployed, unrouted.
        script: subdomain ? script : { ...script, workers_dev: false },
        version,
        secrets: await this.store.getSecrets(script.account_id, script.name),
        subdomain: subdomain ?? 'released',
        scheduled: scheduled.has(`${script.account_id}/${script.name}`),
        routed: routed.has(`${script.account_id}/${script.name}`),
        durableObjects: runtimeClasses(classes.get(`${script.account_id}/${script.name}`) ?? []),
        remoteObjects: remoteClasses(
          script.name,
          version.bindings,
          [...classes.entries()].flatMap(([key, records]) => (key.startsWith(`${script.account_id}/`) ? records : [])),
        ),
      });
    }
    return out;
  }
}

/** wrangler documents `secret bulk` as "up to 100 secrets per command". */
const BULK_SECRET_LIMIT = 100;

/** New bindings = the uploaded ones, plus `inherit` names and `keep_bindings` types from the previous version. */
function mergeBindings(upload: ScriptUpload, previous: VersionRecord | undefined): Binding[] {
  const result = [...upload.bindings];
  const named = new Set(result.map((b) => b.name));
  for (const name of upload.inherit) {
    const old = previous?.bindings.find((b) => b.name === name);
    if (!old)
      throw WorkerErrors.invalidScript(
        `Binding "${clip(name)}" is marked inherit, but the previous version has no binding of that name.`,
      );
    result.push(old);
    named.add(name);
  }
  for (const old of previous?.bindings ?? []) {
    if (upload.keepBindings.includes(old.type) && !named.has(old.name)) result.push(old);
  }
  return result;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}
