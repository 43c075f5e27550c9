import { TAIL_FLAG_BINDING } from '../../isolate/contract.ts';
import { scriptFlagDir } from '../../tail-traces.ts';
import { diskService } from '../services.ts';
import type { PlatformBindingModule } from './contract.ts';

/**
 * The script's own tail flag (tail-traces.ts): a read-only disk service rooted at
 * `<flags>/<account>/<script>/`, so nothing the script can reach names or reads another script's flag.
 * The directory must exist before workerd starts: the runtime makes it.
 */
export const tailFlags: PlatformBindingModule = ({ deployed, tailFlagsDir }) => {
  const { account_id: account, name } = deployed.script;
  const directory = scriptFlagDir(tailFlagsDir, account, name);
  const service = `ledge-tail-flags:${account}/${name}`;
  return {
    bindings: [{ name: TAIL_FLAG_BINDING, service }],
    services: [diskService(service, directory)],
    directories: [directory],
  };
};
