export { startServer, type RunningServer } from './server.ts';
export { resolveServerConfig, type ServerConfig, type ServerFlags } from './config.ts';
export { createPlatform, type Platform, type BackgroundService } from './platform.ts';
export { dataPaths } from './data-dir.ts';
export type { Credentials } from './bootstrap.ts';
