import { createHash } from 'node:crypto';
import type { ScriptToRun } from './script.ts';

/** How many passed checks are remembered; the oldest is forgotten first. */
const REMEMBERED = 256;

/**
 * What decides whether a script loads: everything its process config is built from except the version's id
 * and its assets' directory, whose files workerd reads only when a request asks for one (a redeploy that
 * changes files alone builds the same config around another directory).
 */
function loadKey(candidate: ScriptToRun): string {
  // Fields picked one by one: callers pass their records, which carry more (timestamps, tags) than the runtime reads.
  const { script, version, secrets, subdomain, scheduled, routed, assets, durableObjects, entrypoints } = candidate;
  return createHash('sha256')
    .update(
      JSON.stringify([
        script.account_id,
        script.name,
        version.main_module,
        version.modules,
        version.bindings,
        version.compatibility_date,
        version.compatibility_flags,
        version.cpu_ms,
        secrets.map((s) => [s.name, s.text]),
        subdomain,
        scheduled,
        routed === true,
        assets ? [assets.config, assets.binding ?? null] : null,
        durableObjects ?? [],
        entrypoints ?? [],
      ]),
    )
    .digest('hex');
}

/**
 * The upload checks that passed in this runtime: a version whose config would be the same as one that loaded
 * needs no throwaway workerd again (a redeploy of changed assets, the same code uploaded twice). Only passes
 * are kept, so a script that failed is always checked again.
 */
export class LoadedBefore {
  readonly #keys = new Set<string>();

  has(candidate: ScriptToRun): boolean {
    return this.#keys.has(loadKey(candidate));
  }

  add(candidate: ScriptToRun): void {
    const key = loadKey(candidate);
    this.#keys.delete(key);
    this.#keys.add(key);
    for (const oldest of this.#keys) {
      if (this.#keys.size <= REMEMBERED) break;
      this.#keys.delete(oldest);
    }
  }
}
