import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { API_PREFIX, createApiApp } from '../api/app.ts';
import { answerProtocolErrors, apiRequestListener } from '../api/listener.ts';
import { applyIdleTimeout, httpServerOptions, httpTimeouts } from '../shared/http-timeouts.ts';
import type { Logger } from '../shared/logger.ts';
import { bootstrapIfEmpty, writeCredentialsFile, type Credentials } from './bootstrap.ts';
import type { ServerConfig } from './config.ts';
import { createPlatform, type Platform } from './platform.ts';

export interface RunningServer {
  apiUrl: string;
  port: number;
  platform: Platform;
  /** Present only on the first boot of a data dir: shown once, also written to credentials.json. */
  credentials: Credentials | undefined;
  close(): Promise<void>;
}

/** Boots the platform: data dir and database, first-boot credentials, the API, then background services. */
export async function startServer(config: ServerConfig, logger?: Logger): Promise<RunningServer> {
  const platform = createPlatform(config, logger);
  const created = await bootstrapIfEmpty(platform.accounts, config.bootstrap);
  const app = createApiApp(platform);
  // Slow and idle clients: see http-timeouts.ts for the bounds and why.
  const timeouts = httpTimeouts(config.env);
  const server = createServer(
    httpServerOptions(timeouts),
    apiRequestListener(app.fetch, { hostname: config.host, logger: platform.logger }),
  );
  applyIdleTimeout(server, timeouts);
  answerProtocolErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  platform.egress.addOwnListener(port, 'API');
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const apiUrl = `http://${host}:${port}${API_PREFIX}`;
  let credentials: Credentials | undefined;
  if (created) {
    credentials = { api_url: apiUrl, ...created };
    writeCredentialsFile(platform.paths.credentials, credentials);
  }
  const started: typeof platform.background = [];
  try {
    for (const service of platform.background) {
      await service.start();
      started.push(service);
    }
  } catch (error) {
    await stopAll(started, platform);
    server.close();
    platform.db.close();
    throw error;
  }
  platform.logger.info('ledge server ready', { api_url: apiUrl, data_dir: config.dataDir });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      });
      await stopAll(started, platform);
      platform.db.close();
    })());
  return { apiUrl, port, platform, credentials, close };
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
