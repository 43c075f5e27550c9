export { d1Migrations } from './migrations.ts';
export { createD1Subsystem, type D1Subsystem } from './subsystem.ts';
export { D1Service, DEFAULT_D1_LIMITS, type D1DatabaseChanges, type D1Limits } from './service.ts';
export { SqlD1Store } from './store.ts';
export { D1Errors } from './errors.ts';
export type { D1EngineSockets } from './engine-client.ts';
export type { D1DatabaseRecord } from './schemas.ts';
