import type { EnginesClusterSettings } from './engine-host.ts';
import type { ClusterConfig } from './config/types.ts';
import type { ScriptToRun } from './script.ts';

/**
 * The workerd cluster of a script that hosts Durable Objects (or Workflows, whose instances are Durable Objects
 * too), on several nodes: the script's own process on every node is one instance of it, so each object has one
 * owner at a time across the nodes. One cluster per script, in the script's place in its account's part of the
 * cluster store (`engines/<account>/scripts/<script>`), which the account's key already reaches: the script's
 * classes and its Workflows engine are the cluster's only actor namespaces, as on one node.
 */
export function scriptClusterConfig(settings: EnginesClusterSettings, deployed: ScriptToRun): ClusterConfig {
  const { script } = deployed;
  const account = settings.bucketFor(script.account_id);
  return {
    bucket: `${account.bucket}/scripts/${script.name}`,
    bucketOptions: account.bucketOptions,
    address: `${settings.host}:0`,
    key: settings.key,
    stopTimeoutMs: settings.stopTimeoutMs,
    ...(settings.timeDivisor ? { unsafeTimeDivisor: settings.timeDivisor } : {}),
  };
}

/** The internal module that makes a clustered script's own namespace bindings (isolate/cluster-objects.ts). */
export const CLUSTER_OBJECTS_MODULE = 'ledge-internal:cluster-objects';

/** How long a clustered process gets from SIGTERM to SIGKILL: its hand-off time and a margin. */
export function clusterStopGraceMs(settings: EnginesClusterSettings): number {
  return settings.stopTimeoutMs + 2_000;
}
