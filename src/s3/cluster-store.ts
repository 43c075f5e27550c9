import { createHmac } from 'node:crypto';
import type { BackgroundService } from '../shared/background-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { HttpTimeouts } from '../shared/http-timeouts.ts';
import type { Logger } from '../shared/logger.ts';
import type { Principal } from '../shared/principal.ts';
import type { StorageService } from '../storage/index.ts';
import type { S3AccessKey, S3Action, S3CredentialSource } from './credentials.ts';
import { S3Listener } from './listener.ts';

/**
 * The owner of the cluster store's bucket: not an account id (those are 32 hex digits), so no tenant, token or
 * route can name it, and its bucket is in no account's listing.
 */
export const CLUSTER_STORE_ACCOUNT = 'ledge-cluster';
/** The one bucket of the cluster store; each account's instances keep their state under `engines/<account>/`. */
export const CLUSTER_STORE_BUCKET = 'workerd-cluster';
const ACCESS_KEY_PREFIX = 'ledge-cluster-';
const ACCOUNT_ID = /^[0-9a-f]{32}$/;

export interface ClusterStoreDeps {
  storage: StorageService;
  /** The secret the access keys' secrets derive from: the server's, so every node computes the same ones. */
  secret: Buffer;
  httpTimeouts: HttpTimeouts;
  logger: Logger;
  clock: Clock;
}

/**
 * The bucket workerd's cluster mode keeps its shared state in (leases, each Durable Object's owner record, its
 * log and snapshots, KV's blobs), served over S3 on a loopback port of every node from Ledge's own storage engine:
 * records in PostgreSQL, bytes in the S3 store, as every R2 object. workerd claims ownership with conditional
 * writes (`If-None-Match: *`, `If-Match: <etag>`), which it checks the bucket honours before it joins; Ledge's
 * engine decides them in one database transaction on every node alike, while an S3 store that lacks them
 * (OpenStack Swift's s3api answers 501) could not hold a cluster at all.
 *
 * Each account's instances sign with a key of their own that reaches only the account's prefix, so one
 * account's engines can neither read nor claim another's objects.
 */
export class ClusterStore implements BackgroundService {
  readonly name = 'cluster-store';
  readonly #deps: ClusterStoreDeps;
  readonly #listener: S3Listener;

  constructor(deps: ClusterStoreDeps) {
    this.#deps = deps;
    this.#listener = new S3Listener({
      host: '127.0.0.1',
      port: 0,
      portSetting: { flag: undefined, env: 'none (a port of its own, chosen at start)' },
      storage: deps.storage,
      credentials: clusterStoreKeys(deps.secret),
      httpTimeouts: deps.httpTimeouts,
      logger: deps.logger.child({ component: 'cluster-store' }),
      clock: deps.clock,
    });
  }

  async start(): Promise<void> {
    await this.#ensureBucket();
    await this.#listener.start();
  }

  stop(): Promise<void> {
    return this.#listener.stop();
  }

  /** The account's place in the store and the S3 settings its instances use (workerd's `bucketOptions`). */
  bucketFor(accountId: string): { bucket: string; bucketOptions: string[] } {
    const port = this.#listener.port;
    if (port === undefined) throw new Error('the cluster store is not listening');
    return {
      bucket: `s3://${CLUSTER_STORE_BUCKET}/${prefixOf(accountId)}`,
      bucketOptions: [
        `aws_endpoint=http://127.0.0.1:${port}`,
        'aws_region=auto',
        `aws_access_key_id=${ACCESS_KEY_PREFIX}${accountId}`,
        `aws_secret_access_key=${secretOf(this.#deps.secret, accountId)}`,
      ],
    };
  }

  /** Nodes starting together each try: the bucket is made once, the others find it. */
  async #ensureBucket(): Promise<void> {
    const { storage } = this.#deps;
    if (await storage.getBucket(CLUSTER_STORE_ACCOUNT, CLUSTER_STORE_BUCKET)) return;
    try {
      await storage.buckets.create(CLUSTER_STORE_ACCOUNT, { name: CLUSTER_STORE_BUCKET });
    } catch (error) {
      if (!(await storage.getBucket(CLUSTER_STORE_ACCOUNT, CLUSTER_STORE_BUCKET))) throw error;
    }
  }
}

/** `engines/<account>`: every key the account's instances write, list or read starts with it and a slash. */
function prefixOf(accountId: string): string {
  return `engines/${accountId}`;
}

function secretOf(secret: Buffer, accountId: string): string {
  return createHmac('sha256', secret).update(`cluster store key: ${accountId}`).digest('hex');
}

/** One access key per account, its secret derived from the server's; each reaches only its account's prefix. */
export function clusterStoreKeys(secret: Buffer): S3CredentialSource {
  return {
    lookup(accessKeyId, sessionToken) {
      if (sessionToken !== undefined || !accessKeyId.startsWith(ACCESS_KEY_PREFIX)) return Promise.resolve(undefined);
      const accountId = accessKeyId.slice(ACCESS_KEY_PREFIX.length);
      if (!ACCOUNT_ID.test(accountId)) return Promise.resolve(undefined);
      const inside = `${prefixOf(accountId)}/`;
      const key: S3AccessKey = {
        secret: secretOf(secret, accountId),
        principal: CLUSTER_PRINCIPAL,
        permits: (action: S3Action) =>
          action.accountId === CLUSTER_STORE_ACCOUNT &&
          action.bucket === CLUSTER_STORE_BUCKET &&
          (action.key !== undefined || action.prefix !== undefined) &&
          (action.key === undefined || action.key.startsWith(inside)) &&
          (action.prefix === undefined || action.prefix.startsWith(inside)),
      };
      return Promise.resolve(key);
    },
  };
}

const CLUSTER_PRINCIPAL: Principal = {
  userId: 'ledge-cluster',
  email: 'cluster@ledge.invalid',
  via: 'api_token',
  token: null,
  readOnly: false,
  accountIds: new Set([CLUSTER_STORE_ACCOUNT]),
};
