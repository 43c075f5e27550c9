import type { EngineKind } from './contract.ts';
import { d1Engine } from './d1.ts';
import { kvEngine } from './kv.ts';

export type { EngineContribution, EngineKind, EnginesInput } from './contract.ts';
export { engineSocketPath } from './common.ts';
export { KV_NAMESPACE_HEADER } from './kv.ts';
export { D1_DATABASE_HEADER } from './d1.ts';

/** The settings engine kinds take (the server's). */
export interface EngineSettings {
  d1: { maxDatabaseBytes: number };
}

/** Every data engine an account's engines process runs, one socket each. A new kind is a module and a line. */
export function engineKinds(settings: EngineSettings): EngineKind[] {
  return [kvEngine, d1Engine(settings.d1)];
}
