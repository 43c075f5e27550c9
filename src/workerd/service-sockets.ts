import { createHash } from 'node:crypto';
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { objectGateEntrypoint, remoteObjectBindings } from './remote-objects.ts';
import { hostedWorkflows, isLoaded, type Binding, type ScriptToRun } from './script.ts';

/**
 * Service bindings between scripts that run in different workerd processes (docs/architecture.md, "Service
 * bindings across processes"). A script that others bind to serves each bound entrypoint on a unix socket of
 * its own process with workerd's `capnpConnectHost`, so one socket carries both HTTP (`fetch`) and Cap'n Proto
 * RPC (JS RPC to `WorkerEntrypoint` methods); a caller's binding is an `external` service at that entrypoint's
 * *stable* path, a symlink the runtime points at the socket of the process that serves the target now. A
 * redeploy or a restart re-points it; a caller's workerd keeps an RPC connection until it breaks, then
 * reconnects through the link. The socket's path is in no config but the bound callers', under the
 * runtime's private socket directory, and an isolate cannot open a unix socket by itself: a script reaches
 * only the entrypoints it is bound to.
 */

/** The CONNECT host that asks a socket for a Cap'n Proto session (workerd's HttpOptions.capnpConnectHost). */
export const SERVICE_RPC_HOST = 'ledge-service-rpc';
/** How a binding without `entrypoint` names the default export. */
export const DEFAULT_ENTRYPOINT = 'default';

type ServiceBinding = Extract<Binding, { type: 'service' }>;

const serviceBindings = (d: ScriptToRun): ServiceBinding[] =>
  d.version.bindings.filter((b): b is ServiceBinding => b.type === 'service');

/** What a script binds to in other scripts: service entrypoints, and the gates of remote Durable Object classes. */
const boundEntrypoints = (d: ScriptToRun): { script: string; entrypoint: string }[] => [
  ...serviceBindings(d).map((b) => ({ script: b.service, entrypoint: b.entrypoint ?? DEFAULT_ENTRYPOINT })),
  ...remoteObjectBindings(d).map((b) => ({ script: b.script_name!, entrypoint: objectGateEntrypoint(b.class_name) })),
];

/**
 * The scripts with the entrypoints other scripts of their account bind to (`entrypoints`), which makes them
 * loaded: a target bound only through a service binding (workers_dev off, no Cron Triggers) runs too, and
 * its own bindings count in turn. A script bound only by itself is served in its own process, no socket.
 */
export function withServedEntrypoints(scripts: readonly ScriptToRun[]): ScriptToRun[] {
  const byKey = new Map(scripts.map((d) => [`${d.script.account_id}/${d.script.name}`, d]));
  const served = new Map<string, Set<string>>();
  const loaded = new Set(scripts.filter(isLoaded).map((d) => `${d.script.account_id}/${d.script.name}`));
  const pending = [...loaded];
  while (pending.length > 0) {
    const caller = byKey.get(pending.pop()!)!;
    // A Workflow of another script: that script's engine serves it (only a Workflow it runs, so a caller's
    // binding can never keep the target from starting).
    for (const { script, entrypoint } of workflowTargets(caller)) {
      const key = `${caller.script.account_id}/${script}`;
      const target = byKey.get(key);
      if (!target || !hostedWorkflows(target).some((w) => workflowEntrypoint(w.workflow_name) === entrypoint)) continue;
      const set = served.get(key) ?? new Set<string>();
      set.add(entrypoint);
      served.set(key, set);
    }
    for (const binding of boundEntrypoints(caller)) {
      if (binding.script === caller.script.name) continue;
      const key = `${caller.script.account_id}/${binding.script}`;
      if (!byKey.has(key)) continue;
      const set = served.get(key) ?? new Set<string>();
      set.add(binding.entrypoint);
      served.set(key, set);
      if (!loaded.has(key)) {
        loaded.add(key);
        pending.push(key);
      }
    }
  }
  return scripts.map((d) => {
    // Entrypoints the caller set already (a queue consumer's relay) are served too.
    const entrypoints = new Set([
      ...(d.entrypoints ?? []),
      ...(served.get(`${d.script.account_id}/${d.script.name}`) ?? []),
    ]);
    return entrypoints.size > 0 ? { ...d, entrypoints: [...entrypoints].sort() } : d;
  });
}

/**
 * Where callers reach one entrypoint of a script: a stable path (a symlink, see pointServiceSocket) named by
 * a digest, so it fits a unix socket address whatever the names' lengths.
 */
export function serviceSocketPath(dir: string, accountId: string, script: string, entrypoint: string): string {
  const digest = createHash('sha256').update(`${accountId}/${script}#${entrypoint}`).digest('hex').slice(0, 20);
  return join(dir, `svc-${digest}.sock`);
}

/** Points the stable path at the socket a process listens on, atomically (a new link renamed over the old). */
export function pointServiceSocket(stable: string, socket: string): void {
  const temporary = `${stable}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  symlinkSync(socket, temporary);
  renameSync(temporary, stable);
}

/** The served entrypoint that stands for a script's Workflow (its engine's WorkflowBinding for that name). */
export const workflowEntrypoint = (workflow: string): string => `workflow:${workflow}`;

/** The Workflows of other scripts a script is bound to, as (script, entrypoint). */
const workflowTargets = (d: ScriptToRun): { script: string; entrypoint: string }[] =>
  d.version.bindings.flatMap((b) =>
    b.type === 'workflow' && b.script_name !== undefined && b.script_name !== d.script.name
      ? [{ script: b.script_name, entrypoint: workflowEntrypoint(b.workflow_name) }]
      : [],
  );

/** The name of a process's socket for its `index`-th served entrypoint (config and `--socket-addr` agree). */
export const serviceSocketName = (index: number): string => `svc-${index}`;

/** The entrypoint workerd's load error says the script does not export, if that is why it did not start. */
export function missingEntrypoint(loadError: string): string | undefined {
  return /with a named entrypoint "([^"]+)", but "[^"]*" has no such named entrypoint/.exec(loadError)?.[1];
}
