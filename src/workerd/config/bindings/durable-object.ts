import { join } from 'node:path';
import type { Binding } from '../../script.ts';
import { VOID } from '../types.ts';
import type { BindingModule, PlatformBindingModule } from './contract.ts';

/**
 * `durable_object_namespace`: a namespace of a class the script itself hosts (durableObjectClasses below
 * declares it). A binding to another script's class is refused at upload, so it never reaches the config.
 */
export const durableObjectNamespace: BindingModule<Extract<Binding, { type: 'durable_object_namespace' }>> = (
  binding,
) => ({ bindings: [{ name: binding.name, durableObjectNamespace: { className: binding.class_name } }] });

/**
 * The Durable Object classes the script hosts, each under its namespace id as workerd's `uniqueKey`: the id
 * derives the objects' ids (`idFromName`) and names their directory, so a renamed or transferred class keeps
 * its objects. Their storage is one writable disk per account (`<root>/<account>`), or memory when the config
 * is only checked.
 */
export const durableObjectClasses: PlatformBindingModule = ({ deployed, durableObjectsDir }) => {
  const classes = deployed.durableObjects ?? [];
  if (classes.length === 0) return { bindings: [] };
  const namespaces = classes.map((c) => ({ className: c.class_name, uniqueKey: c.namespace_id, enableSql: c.sqlite }));
  if (!durableObjectsDir) {
    return { bindings: [], durableObjectNamespaces: namespaces, durableObjectStorage: { inMemory: VOID } };
  }
  const account = deployed.script.account_id;
  const directory = join(durableObjectsDir, account);
  const service = `durable-objects:${account}`;
  return {
    bindings: [],
    durableObjectNamespaces: namespaces,
    durableObjectStorage: { localDisk: service },
    services: [{ name: service, disk: { path: directory, writable: true } }],
    directories: [directory],
  };
};
