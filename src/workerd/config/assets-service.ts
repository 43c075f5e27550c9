import type { ScriptToRun } from '../script.ts';
import type { Service } from './types.ts';

/** The name of a script's `assets` service: requests to its host go there, and its assets binding names it. */
export function assetsServiceName(deployed: ScriptToRun): string {
  return `${deployed.script.account_id}/${deployed.script.name}#assets`;
}

/**
 * workerd's own `assets` service for a script's version: its directory (written by the runtime before the
 * config, which only names it) and Cloudflare's routing rules as config. With a user worker, it calls the
 * worker as `run_worker_first` and the files say, and the worker's compatibility selects assets behaviour;
 * an assets-only version gives its date and flags itself.
 */
export function assetsService(
  deployed: ScriptToRun,
  front: { userWorker: string } | { compatibilityDate: string; compatibilityFlags: string[] },
): Service | undefined {
  const assets = deployed.assets;
  if (!assets) return undefined;
  return {
    name: assetsServiceName(deployed),
    assets: { path: assets.directory, config: assets.config, ...front },
  };
}
