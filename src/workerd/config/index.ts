/**
 * workerd's configuration: typed records (types.ts) built without side effects (functions-config.ts,
 * front-config.ts; a binding kind is a module of bindings/), written as text in one place (serialize.ts),
 * and put on disk by the runtime (write.ts).
 */
export { buildFunctionsConfig } from './functions-config.ts';
export { buildFrontConfig } from './front-config.ts';
export { httpSocketName } from './platform-services.ts';
export { buildEnginesConfig } from './engines-config.ts';
export { serializeConfig, capnpString } from './serialize.ts';
export { writeConfig, writeFrontRoutes, type FrontRoutes } from './write.ts';
export type { BuiltConfig, ConfigFile } from './built.ts';
export type {
  FrontConfigInput,
  FrontSlot,
  FunctionsConfigInput,
  LocalReads,
  R2ServiceResolver,
  WorkerdR2Service,
} from './input.ts';
export { FUNCTION_V8_FLAGS, WORKERD_V8_FLAGS } from './v8-flags.ts';
export type * from './types.ts';
