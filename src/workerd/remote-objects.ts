import type { Binding, ScriptToRun } from './script.ts';

/**
 * Durable Object bindings to a class another script of the account hosts (`script_name`). That script runs
 * in a process of its own, and workerd's namespace bindings reach only classes of their own process, so:
 *
 * - the hosting script's wrapper exports, per class, a gate entrypoint (isolate/object-gate.ts) that reaches
 *   the class's objects through a hidden namespace binding; it is served on a socket like any entrypoint a
 *   service binding names (service-sockets.ts), so the socket follows the host's current process;
 * - the caller's binding is a wrapped binding (isolate/remote-objects.ts) over that socket and over a local
 *   namespace of an empty class with the host's namespace id as its `uniqueKey`: workerd derives ids from
 *   the key alone, so `idFromName`, `newUniqueId` and `idFromString` give the ids the host gives, at once and
 *   without a round trip, and only calls on a stub cross to the host.
 */

/** The hosting script's entrypoint that serves one of its classes to other scripts of its account. */
export const objectGateEntrypoint = (className: string): string => `__ledgeObjects_${className}`;
/** The hidden namespace binding the gate of a class reaches its objects through (isolate/contract.ts prefix). */
export const objectGateBinding = (className: string): string => `__LEDGE_DO_${className}`;
/** The caller's empty class whose namespace derives the host's ids (one per remote namespace). */
export const objectIdsClass = (namespaceId: string): string => `__ledgeIds_${namespaceId}`;
/** The internal module that makes the caller's binding (workerd `extensions`, internal). */
export const REMOTE_OBJECTS_MODULE = 'ledge-internal:remote-objects';

type ObjectBinding = Extract<Binding, { type: 'durable_object_namespace' }>;

/** The script's Durable Object bindings to a class of another script (none to its own classes). */
export function remoteObjectBindings(deployed: Pick<ScriptToRun, 'script' | 'version'>): ObjectBinding[] {
  return deployed.version.bindings.filter(
    (b): b is ObjectBinding =>
      b.type === 'durable_object_namespace' && b.script_name !== undefined && b.script_name !== deployed.script.name,
  );
}
