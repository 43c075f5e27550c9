import type { Logger } from '../../shared/logger.ts';
import type { DeployedScript } from '../types.ts';
import { workerdAssetsConfig } from './schemas.ts';
import type { AssetsService } from './service.ts';

/**
 * Hands the runtime each deployed version's assets as a directory: written before the runtime builds its
 * config (which only names it). A version's directory never changes, so a request sees the old version's
 * files or the new one's, never a mix; the directories of the previous round stay for the processes still
 * finishing their requests, older ones go.
 */
export class ServedAssets {
  readonly #assets: AssetsService;
  readonly #logger: Logger;
  #previous = new Set<string>();

  constructor(assets: AssetsService, logger: Logger) {
    this.#assets = assets;
    this.#logger = logger;
  }

  async prepare(deployed: DeployedScript[]): Promise<DeployedScript[]> {
    const out: DeployedScript[] = [];
    const current = new Set<string>();
    for (const script of deployed) {
      const assets = script.version.assets;
      if (!assets) {
        out.push(script);
        continue;
      }
      const { account_id: accountId, id } = script.version;
      try {
        const directory = await this.#assets.materialise(accountId, id, assets.manifest);
        current.add(`${accountId}/${id}`);
        out.push({
          ...script,
          assets: { directory, config: workerdAssetsConfig(assets.config), binding: assets.binding },
        });
      } catch (error) {
        // One account's missing files fail its script alone: code still runs, an assets-only site is not served.
        this.#logger.error('static assets could not be prepared', {
          account: accountId,
          script: script.script.name,
          err: error,
        });
        if (script.version.main_module !== '') out.push(script);
      }
    }
    await this.#assets.pruneDirectories(new Set([...current, ...this.#previous]));
    this.#previous = current;
    return out;
  }
}
