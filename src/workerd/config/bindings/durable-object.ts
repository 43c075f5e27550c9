import { join } from 'node:path';
import { OBJECT_TARGET_HEADER } from '../../isolate/contract.ts';
import {
  objectGateBinding,
  objectGateEntrypoint,
  objectIdsClass,
  REMOTE_OBJECTS_MODULE,
} from '../../remote-objects.ts';
import type { Binding } from '../../script.ts';
import { SERVICE_RPC_HOST } from '../../service-sockets.ts';
import { CLUSTER_OBJECTS_MODULE } from '../../objects-cluster.ts';
import { VOID, type Worker_Binding } from '../types.ts';
import type { BindingModule, Contribution, PlatformBindingModule, ScriptContext } from './contract.ts';

type ObjectBinding = Extract<Binding, { type: 'durable_object_namespace' }>;

/**
 * `durable_object_namespace`: a namespace of a class the script itself hosts (durableObjectClasses below
 * declares it), or, with `script_name`, of a class another script of the account hosts (remoteNamespace).
 */
export const durableObjectNamespace: BindingModule<ObjectBinding> = (binding, context) =>
  binding.script_name !== undefined && binding.script_name !== context.deployed.script.name
    ? remoteNamespace(binding, context)
    : { bindings: [ownNamespace(binding.name, binding.class_name, context.clustered)] };

/**
 * A namespace of a class the script hosts; in a cluster, given through the module that makes a stub's method
 * call once more when it fails as retryable while a node hands its objects over (isolate/cluster-objects.ts).
 */
function ownNamespace(name: string, className: string, clustered: boolean | undefined): Worker_Binding {
  const namespace = { durableObjectNamespace: { className } };
  if (!clustered) return { name, ...namespace };
  return {
    name,
    wrapped: { moduleName: CLUSTER_OBJECTS_MODULE, innerBindings: [{ name: 'namespace', ...namespace }] },
  };
}

/**
 * Another script's class (remote-objects.ts): a wrapped binding over the host's gate socket for the class
 * and a local namespace of an empty class keyed by the host's namespace id, which derives the host's ids.
 * A class the host no longer has (deleted since the binding was deployed) leaves the binding unset.
 */
function remoteNamespace(binding: ObjectBinding, context: ScriptContext): Contribution {
  const { deployed, serviceSocket } = context;
  const account = deployed.script.account_id;
  const target = deployed.remoteObjects?.find(
    (r) => r.script_name === binding.script_name && r.class_name === binding.class_name,
  );
  if (!target) return { bindings: [] };
  if (!serviceSocket) throw new Error(`Durable Object binding ${binding.name}: the runtime has no service sockets`);
  const entrypoint = objectGateEntrypoint(binding.class_name);
  const gate = `service:${account}/${binding.script_name}#${entrypoint}`;
  const ids = objectIdsClass(target.namespace_id);
  return {
    bindings: [
      {
        name: binding.name,
        wrapped: {
          moduleName: REMOTE_OBJECTS_MODULE,
          innerBindings: [
            { name: 'gate', service: gate },
            { name: 'ids', durableObjectNamespace: { className: ids } },
            { name: 'header', text: OBJECT_TARGET_HEADER },
          ],
        },
      },
    ],
    services: [
      {
        name: gate,
        external: {
          address: `unix:${serviceSocket(account, binding.script_name!, entrypoint)}`,
          http: { capnpConnectHost: SERVICE_RPC_HOST },
        },
      },
    ],
    durableObjectNamespaces: [{ className: ids, uniqueKey: target.namespace_id }],
    // No object of it is ever made; a script that hosts classes of its own has their storage already.
    ...((deployed.durableObjects?.length ?? 0) === 0 ? { durableObjectStorage: { inMemory: VOID } } : {}),
  };
}

/**
 * The Durable Object classes the script hosts, each under its namespace id as workerd's `uniqueKey`: the id
 * derives the objects' ids (`idFromName`) and names their directory, so a renamed or transferred class keeps
 * its objects. Their storage is one writable disk per account (`<root>/<account>`), or memory when the config
 * is only checked. In a cluster (several nodes) the disk is the script's own, `<root>/<account>/cluster/<script>`:
 * this node's copy of the objects of the script's cluster (objects-cluster.ts).
 * Each class also gets a hidden binding for its gate (isolate/object-gate.ts).
 */
export const durableObjectClasses: PlatformBindingModule = ({ deployed, durableObjectsDir, clustered }) => {
  const classes = deployed.durableObjects ?? [];
  if (classes.length === 0) return { bindings: [] };
  const namespaces = classes.map((c) => ({ className: c.class_name, uniqueKey: c.namespace_id, enableSql: c.sqlite }));
  const gates = classes.map((c) => ownNamespace(objectGateBinding(c.class_name), c.class_name, clustered));
  if (!durableObjectsDir) {
    return { bindings: gates, durableObjectNamespaces: namespaces, durableObjectStorage: { inMemory: VOID } };
  }
  const account = deployed.script.account_id;
  const directory = clustered
    ? join(durableObjectsDir, account, 'cluster', deployed.script.name)
    : join(durableObjectsDir, account);
  const service = `durable-objects:${account}`;
  return {
    bindings: gates,
    durableObjectNamespaces: namespaces,
    durableObjectStorage: { localDisk: service },
    services: [{ name: service, disk: { path: directory, writable: true } }],
    directories: [directory],
  };
};
