import { ConfigFiles, type BuiltConfig } from './built.ts';
import type { EngineKind, EnginesInput } from './engines/index.ts';
import type { ClusterConfig, Service, Socket } from './types.ts';
import { WORKERD_V8_FLAGS } from './v8-flags.ts';

/**
 * The config of one account's engines process: each data engine kind (KV, D1, ...) as workerd's own bundled
 * module, its Durable Objects on the account's disk, listening on a unix socket of its own. It runs no tenant
 * code, and it is the same for every account but for its paths (and the account's id in D1's object key).
 * With `cluster` (several nodes) the process is one instance of the account's workerd cluster: the kinds are
 * built for it (`EnginesInput.clustered`) and the config carries workerd's `Config.cluster`.
 * Pure: nothing is written or made here.
 */
export function buildEnginesConfig(
  input: EnginesInput,
  kinds: readonly EngineKind[],
  cluster?: ClusterConfig,
): BuiltConfig {
  const files = new ConfigFiles();
  const services: Service[] = [];
  const sockets: Socket[] = [];
  const directories: string[] = [];
  for (const kind of kinds) {
    const built = kind.build({ ...input, clustered: cluster !== undefined }, files);
    services.push(...built.services);
    sockets.push(built.socket);
    directories.push(...built.directories);
  }
  return {
    config: { services, sockets, v8Flags: WORKERD_V8_FLAGS, ...(cluster ? { cluster } : {}) },
    files: files.list(),
    directories,
  };
}
