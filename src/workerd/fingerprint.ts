import { createHash } from 'node:crypto';
import type { ScriptToRun } from './script.ts';

/** `<account>/<script>`: how the runtime names a script in its reports and maps. */
export const scriptKey = (accountId: string, script: string): string => `${accountId}/${script}`;

/**
 * Everything about a deployed script that changes what its workerd process runs: the version (code,
 * bindings, limits, compatibility), its secrets, whether and where it is routed (workers.dev, Workers routes),
 * whether it has Cron Triggers, the Durable Object classes it hosts, which of its entrypoints other scripts bind
 * to, the queues it consumes. Equal fingerprints mean the running process can stay; a failed start is remembered by it, so
 * the same broken configuration is not tried again on every other tenant's change, and a new deploy, a
 * secret or a delete (anything that changes the fingerprint) tries again.
 */
export function runtimeFingerprint(deployed: ScriptToRun): string {
  const {
    script,
    version,
    secrets,
    subdomain,
    scheduled,
    assets,
    routed,
    durableObjects,
    remoteObjects,
    entrypoints,
    consumedQueues,
  } = deployed;
  return createHash('sha256')
    .update(
      JSON.stringify([
        version.id,
        secrets.map((s) => [s.name, s.text]),
        script.workers_dev,
        subdomain,
        scheduled,
        routed === true,
        assets?.directory ?? null,
        durableObjects ?? [],
        remoteObjects ?? [],
        entrypoints ?? [],
        consumedQueues ?? {},
      ]),
    )
    .digest('hex');
}
