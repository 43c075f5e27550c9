import { newId } from '../../shared/ids.ts';
import type { Binding, DurableObjectClass, RemoteObjectClass } from '../../workerd/index.ts';
import { DurableObjectErrors } from './errors.ts';
import { planMigrations, type MigrationPlan } from './plan.ts';
import type { Migrations, NamespaceRecord } from './schemas.ts';
import type { ClusterObjects } from './cluster-objects.ts';
import type { DurableObjectStorage } from './storage.ts';
import type { DurableObjectNamespaceStore, ScriptClasses } from './store.ts';

/** What an upload will do to its script's Durable Object classes, and how to put them back. */
export interface PreparedClasses {
  plan: MigrationPlan;
  previous: ScriptClasses;
  /** Classes transferred from other scripts, as they were (restored if the deploy fails). */
  takenFrom: NamespaceRecord[];
  /** The other scripts' classes its `script_name` bindings name. */
  remote: RemoteObjectClass[];
}

/** Durable Object namespaces: migrations checked and planned at upload, data removed once a class is gone. */
export class DurableObjectsService {
  readonly store: DurableObjectNamespaceStore;
  readonly storage: DurableObjectStorage;
  /** On several nodes: the objects of every node, from the cluster store (cluster-objects.ts). */
  readonly cluster: ClusterObjects | undefined;

  constructor(store: DurableObjectNamespaceStore, storage: DurableObjectStorage, cluster?: ClusterObjects) {
    this.store = store;
    this.storage = storage;
    this.cluster = cluster;
  }

  /** A page of a class's objects that have stored data: every node's on several nodes, else this node's. */
  listObjects(
    namespace: NamespaceRecord,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<{ ids: string[]; cursor: string | undefined }> {
    if (this.cluster) return this.cluster.list(namespace.account_id, namespace.script_name, namespace.id, page);
    return this.storage.listObjects(namespace.account_id, namespace.id, page);
  }

  /**
   * Checks an upload's bindings and migrations against the script's classes and plans the change. Only a
   * deployment may carry migrations (10211), as on Cloudflare.
   */
  async prepare(input: {
    accountId: string;
    script: string;
    bindings: Binding[];
    migrations: Migrations | undefined;
    deploy: boolean;
    now: string;
    /** The bindings of another script's deployed version (a transferred class must not be bound there). */
    bindingsOf: (script: string) => Promise<Binding[]>;
    /** Whether the account has a script of that name (a `script_name` binding's error says which is missing). */
    scriptExists: (script: string) => Promise<boolean>;
  }): Promise<PreparedClasses> {
    if (input.migrations && !input.deploy) throw DurableObjectErrors.migrationInVersion();
    const bound: string[] = [];
    for (const binding of input.bindings) {
      if (binding.type !== 'durable_object_namespace') continue;
      if (binding.script_name === undefined || binding.script_name === input.script) bound.push(binding.class_name);
    }
    const previous = await this.store.forScript(input.accountId, input.script);
    const account = await this.store.forAccount(input.accountId);
    const others = account.filter((r) => r.script_name !== input.script);
    const remote = remoteClasses(input.script, input.bindings, others);
    const missing = input.bindings.find(
      (b) =>
        b.type === 'durable_object_namespace' &&
        b.script_name !== undefined &&
        b.script_name !== input.script &&
        !remote.some((r) => r.script_name === b.script_name && r.class_name === b.class_name),
    );
    if (missing?.type === 'durable_object_namespace')
      throw DurableObjectErrors.remoteClassMissing(
        missing.class_name,
        missing.script_name!,
        await input.scriptExists(missing.script_name!),
      );
    const plan = planMigrations({
      accountId: input.accountId,
      script: input.script,
      currentTag: previous.tag,
      current: previous.classes,
      others,
      migrations: input.migrations,
      boundClasses: bound,
      newId,
      now: input.now,
    });
    const takenFrom = others.filter((r) => plan.classes.some((c) => c.id === r.id));
    const [across] = takenFrom;
    if (this.cluster && across) throw DurableObjectErrors.transferAcrossClusters(across.class_name, across.script_name);
    for (const source of takenFrom) {
      // Its old script would still host it (or fail to start): one class, one live instance per object.
      const still = (await input.bindingsOf(source.script_name)).find(
        (b) =>
          b.type === 'durable_object_namespace' &&
          b.class_name === source.class_name &&
          (b.script_name === undefined || b.script_name === source.script_name),
      );
      if (still)
        throw DurableObjectErrors.migrationConflict(
          `Cannot transfer class '${source.class_name}' from the Worker '${source.script_name}': its binding ${still.name} still refers to it. Deploy that Worker without the binding first.`,
        );
    }
    return { plan, previous, takenFrom, remote };
  }

  /** Removes the data of the account's namespaces that no class owns any more (deleted classes or scripts). */
  async collect(accountId: string, deleted: readonly NamespaceRecord[] = []): Promise<string[]> {
    // On several nodes a deleted class's objects are in the cluster store too (every node's copies are there).
    for (const gone of deleted) await this.cluster?.remove(gone.account_id, gone.script_name, gone.id);
    return this.storage.sweep(accountId, () => this.store.forAccount(accountId));
  }

  /**
   * Removes this node's copies of objects no class owns any more, in every account: as the node starts, and on
   * several nodes after it has reloaded for another node's change (a class or a Worker deleted there).
   */
  async sweepNode(): Promise<void> {
    for (const accountId of await this.storage.accounts()) await this.collect(accountId);
  }
}

/**
 * The classes of other scripts (`others`: the account's, without the script's own) that the script's
 * `script_name` bindings name; a binding to a class that is not there has no entry.
 */
export function remoteClasses(
  script: string,
  bindings: readonly Binding[],
  others: readonly NamespaceRecord[],
): RemoteObjectClass[] {
  return bindings.flatMap((b) => {
    if (b.type !== 'durable_object_namespace' || b.script_name === undefined || b.script_name === script) return [];
    const record = others.find((r) => r.script_name === b.script_name && r.class_name === b.class_name);
    return record ? [{ script_name: record.script_name, class_name: record.class_name, namespace_id: record.id }] : [];
  });
}

/** A script's classes as the runtime loads them. */
export function runtimeClasses(records: readonly NamespaceRecord[]): DurableObjectClass[] {
  return records.map((r) => ({ class_name: r.class_name, namespace_id: r.id, sqlite: r.use_sqlite }));
}
