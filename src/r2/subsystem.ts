import type { AccountService } from '../accounts/index.ts';
import type { Subsystem } from '../api/subsystem.ts';
import type { LedgeMetrics } from '../shared/ledge-metrics.ts';
import type { Logger } from '../shared/logger.ts';
import type { StorageService } from '../storage/index.ts';
import { r2Routes } from './routes.ts';
import { tempCredentialRoutes, TemporaryCredentialService } from './temp-credentials/index.ts';
import { R2WireBackend } from './wire/backend.ts';

export interface R2Subsystem extends Subsystem {
  storage: StorageService;
  /** The socket workerd's r2Bucket bindings talk to. */
  wire: R2WireBackend;
  /** R2's temporary S3 credentials: minted by the API, resolved by the S3 endpoint (`resolve`). */
  tempCredentials: TemporaryCredentialService;
}

/**
 * Object storage over HTTP and for functions: the bucket and object routes, the wire backend, and the
 * storage engine's own upkeep (orphan collection, upload expiry, lifecycle rules) as background services.
 */
export function createR2Subsystem(deps: {
  storage: StorageService;
  accounts: Pick<AccountService, 's3KeyPair'>;
  socketPath: string;
  logger: Logger;
  metrics?: LedgeMetrics | undefined;
}): R2Subsystem {
  const { storage } = deps;
  const wire = new R2WireBackend(storage, deps.socketPath, deps.logger, deps.metrics);
  const tempCredentials = new TemporaryCredentialService({
    s3KeyPair: (accessKeyId) => deps.accounts.s3KeyPair(accessKeyId),
    bucketExists: async (accountId, name) => (await storage.getBucket(accountId, name)) !== undefined,
  });
  return {
    name: 'r2',
    storage,
    wire,
    tempCredentials,
    background: [
      { name: 'storage', start: () => storage.start(), stop: () => storage.stop() },
      wire,
      storage.lifecycle,
    ],
    mountRoutes: (api) => {
      api.route('/', r2Routes(storage, deps.metrics));
      api.route('/', tempCredentialRoutes(tempCredentials));
    },
  };
}
