/** Workers KV (`/accounts/{a}/storage/kv`): namespaces as records, keys in the account's engine (src/workerd). */
export { kvMigrations } from './migrations.ts';
export { createKvSubsystem, type KvSettings, type KvSubsystem } from './subsystem.ts';
export type { KvService } from './service.ts';
export { DEFAULT_MAX_NAMESPACES_PER_ACCOUNT, KV_LIMITS } from './limits.ts';
