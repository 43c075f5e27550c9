import type { AccountService } from '../accounts/index.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';
import type { TemporaryCredentialService } from '../r2/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { HttpTimeouts } from '../shared/http-timeouts.ts';
import type { Logger } from '../shared/logger.ts';
import type { StorageService } from '../storage/index.ts';
import { chainSources, temporaryAccessKeys, tokenAccessKeys } from './credentials.ts';
import { S3Listener } from './listener.ts';
import type { PortSetting } from '../shared/http-listener/port-in-use.ts';

export interface S3Subsystem extends Subsystem {
  /** The listener on `--s3-api-port` (its background service); `port` once it listens. */
  listener: S3Listener;
}

/** The S3 API on its own port, over the same storage engine; it adds no /client/v4 routes. */
export function createS3Subsystem(deps: {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The setting that moves the port, named when the port is taken. */
  portSetting: PortSetting;
  storage: StorageService;
  accounts: AccountService;
  tempCredentials: TemporaryCredentialService;
  httpTimeouts: HttpTimeouts;
  logger: Logger;
  /** Signed requests' time skew, presigned URLs' expiry and the key cache are judged on it. */
  clock: Clock;
}): S3Subsystem {
  const listener = new S3Listener({
    host: deps.host,
    port: deps.port,
    portSetting: deps.portSetting,
    storage: deps.storage,
    // Temporary credentials (with a session token) first, then API tokens' key pairs.
    credentials: chainSources([temporaryAccessKeys(deps.tempCredentials), tokenAccessKeys(deps.accounts, deps.clock)]),
    httpTimeouts: deps.httpTimeouts,
    logger: deps.logger.child({ component: 's3-api' }),
    clock: deps.clock,
  });
  return { name: 's3', listener, background: [listener], mountRoutes: () => undefined };
}
