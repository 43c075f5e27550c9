export { startServer, type RunningServer } from './server.ts';
export { resolveServerConfig, type ServerConfig, type ServerFlags } from './config.ts';
export { createPlatform, type Platform, type BackgroundService } from './platform.ts';
export { dataPaths, rememberedDatabaseUrl } from './data-dir.ts';
// `ledge mail` reads the local mailbox of a server that runs without --smtp-url.
export { LocalMailbox } from '../notifications/index.ts';
export type { Credentials } from './bootstrap.ts';
