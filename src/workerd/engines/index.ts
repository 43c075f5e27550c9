export { EngineHost, type EngineKind, type EnginePaths } from './host.ts';
export { d1Engine, d1SocketPath } from './d1.ts';
