import { API_PREFIX, createApiApp } from '../api/app.ts';
import { answerProtocolErrors, apiRequestListener } from '../api/listener.ts';
import { createHttpServer } from '../shared/http-listener/http-server.ts';
import { listen } from '../shared/http-listener/listen.ts';
import { httpConnections, stopGracefully } from '../shared/http-listener/stop.ts';
import type { Logger } from '../shared/logger.ts';
import { bootstrapIfEmpty, type Credentials } from './bootstrap.ts';
import type { ServerConfig } from './config.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { createPlatform, type Platform } from './platform.ts';
import type { Clock } from '../shared/clock.ts';
import { SETTINGS } from './settings/index.ts';

export interface RunningServer {
  apiUrl: string;
  /** The browser dashboard, at the API port's root. */
  dashboardUrl: string;
  port: number;
  platform: Platform;
  /** Present only on the first boot of a data dir: shown once, also written to credentials.json. */
  credentials: Credentials | undefined;
  close(): Promise<void>;
}

/**
 * Boots the platform: data dir and database, the API, background services (the functions runtime claims
 * its port), and only then, on a fresh data dir, the first-boot credentials. A start that fails before
 * that leaves no account behind, so the next start bootstraps and shows the credentials.
 */
export async function startServer(
  config: ServerConfig,
  logger: Logger | undefined,
  /** The background jobs' time: the server command passes the system's, tests a clock they advance. */
  options: { clock: Clock },
): Promise<RunningServer> {
  // Before anything reads or writes the data dir: a second server on it is refused (data-dir-lock.ts).
  const lock = await lockDataDir(config.dataDir);
  let platform: Platform;
  try {
    platform = await createPlatform(config, logger, options.clock);
  } catch (error) {
    lock.release();
    throw error;
  }
  const app = createApiApp(platform);
  // Slow and idle clients: see shared/http-timeouts.ts for the bounds and why.
  const server = createHttpServer(
    { timeouts: config.httpTimeouts },
    apiRequestListener(app.fetch, { hostname: config.host, logger: platform.logger }),
  );
  answerProtocolErrors(server);
  // WebSocket upgrades: only tail sessions (`wrangler tail`) use them.
  server.on('upgrade', (request, socket, head) => {
    if (!platform.functions.tails.handleUpgrade(request, socket, head)) socket.destroy();
  });
  let port: number;
  try {
    port = await listen(server, { host: config.host, port: config.port, what: 'API', setting: SETTINGS.port });
  } catch (error) {
    await closeDatabases(platform);
    lock.release();
    throw error;
  }
  platform.egress.addOwnListener(port, 'API');
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const apiUrl = `http://${host}:${port}${API_PREFIX}`;
  lock.setApiUrl(apiUrl);
  const dashboardUrl = `http://${host}:${port}/`;
  const started: typeof platform.background = [];
  let credentials: Credentials | undefined;
  try {
    for (const service of platform.background) {
      await service.start();
      started.push(service);
    }
    credentials = await bootstrapIfEmpty(platform.accounts, config.bootstrap, apiUrl, platform.paths.credentials);
  } catch (error) {
    await stopAll(started, platform);
    server.close();
    await closeDatabases(platform);
    lock.release();
    throw error;
  }
  platform.logger.info('ledge server ready', { api_url: apiUrl, data_dir: config.dataDir });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      platform.functions.tails.closeAll();
      await stopGracefully(server, httpConnections(server));
      await stopAll(started, platform);
      await closeDatabases(platform);
      lock.release();
    })());
  return { apiUrl, dashboardUrl, port, platform, credentials, close };
}

async function stopAll(services: Platform['background'], platform: Platform): Promise<void> {
  for (const service of [...services].reverse()) {
    try {
      await service.stop();
    } catch (error) {
      platform.logger.error('background service failed to stop', { service: service.name, err: error });
    }
  }
}

async function closeDatabases(platform: Platform): Promise<void> {
  platform.blobStore.close?.();
  await platform.db.close();
}
