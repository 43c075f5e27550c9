import type { EngineKind } from './contract.ts';
import { kvEngine } from './kv.ts';

export type { EngineContribution, EngineKind, EnginesInput } from './contract.ts';
export { engineSocketPath } from './common.ts';
export { KV_NAMESPACE_HEADER } from './kv.ts';

/** Every data engine an account's engines process runs, one socket each. A new kind is a module and a line. */
export const ENGINE_KINDS: readonly EngineKind[] = [kvEngine];
