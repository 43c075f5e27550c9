import type { EngineSockets } from './bindings/contract.ts';
import type { ScriptToRun } from '../script.ts';
import type { FunctionsEgress } from '../network-service.ts';
import type { ClusterConfig } from './types.ts';

/** What the runtime puts into a workerd `external` service for an r2Bucket binding. */
export interface WorkerdR2Service {
  address: string;
  injectRequestHeaders: { name: string; value: string }[];
}

/** How the functions runtime reads one bucket's large bodies itself (the R2 wire backend's localReads). */
export interface LocalReads {
  /** The bucket's blob directory, handed read-only to the isolates of scripts bound to it. */
  directory: string;
  /** The hidden r2Bucket binding whose gets may be answered with a file instead of bytes. */
  service: WorkerdR2Service;
  /** The custom metadata key under which such a get's answer names the file (relative to `directory`). */
  metadataKey: string;
  /** Set when the server marks gets whose objects isolates may cache (isolate/r2-cache.ts). */
  cacheableKey?: string | undefined;
}

/**
 * How a bucket binding reaches the storage backend (the R2 wire protocol): see r2.md section 2. The
 * R2 product's wire backend implements it; the engine knows only this shape.
 */
export interface R2ServiceResolver {
  workerdService(accountId: string, bucketName: string): WorkerdR2Service;
  /** Set when a bucket's blobs are files here that bound isolates may read themselves (isolate/local-body.ts). */
  localReads?(accountId: string, bucketName: string): LocalReads | undefined;
  /**
   * Set when isolates may cache small objects (isolate/r2-cache.ts): `listener` runs after each write to an object
   * an isolate may hold, and the write is answered once it resolved (storage/object-changes.ts); without a
   * bucket and keys, every cached object must go; `lists`: the bucket's cached listings too.
   */
  onObjectsChanged?(
    listener: (
      bucket: { accountId: string; name: string } | undefined,
      keys: string[] | undefined,
      lists?: boolean,
    ) => Promise<void>,
  ): void;
}

/** What the config of processes that run scripts is built from (functions-config.ts). */
export interface FunctionsConfigInput {
  scripts: ScriptToRun[];
  r2: R2ServiceResolver;
  /** Where the accounts' data engines listen, for KV and D1 bindings (engine-host.ts). */
  engineSockets?: EngineSockets | undefined;
  /** Functions answer at <script>.<subdomain>.<domain>. */
  domain: string;
  /** The newest compatibility date this workerd binary knows; later dates are clamped to it. */
  maxCompatibilityDate: string;
  /**
   * `router` (serving): the entry router owns the socket, or the script itself when only one is routed.
   * `single` (upload check): the only script owns it, unguarded.
   */
  mode: 'router' | 'single';
  /** The secret in routed scripts' router keys (script.ts routedScriptKey); without it they are not reachable. */
  routeKey?: string | undefined;
  /** Absolute path of the tail flags; each script is served its own directory in it, read-only (tail-traces.ts). */
  tailFlagsDir: string;
  /** What functions' fetch() and connect() may reach (workerd's `internet` service); unrestricted without. */
  egress?: FunctionsEgress | undefined;
  /**
   * Listening sockets of the functions port the process serves (`http`, `http-1`, ...; default 1): a process that
   * must be the only one running its script takes every socket of the port's group.
   */
  httpSockets?: number | undefined;
  /** Adds the "ping" socket the watchdog probes; each process binds it where --socket-addr says. */
  ping?: boolean;
  /** fetch() calls one invocation may make (isolate/subrequests.ts). */
  subrequestsPerInvocation?: number | undefined;
  /** Storage one SQLite-backed Durable Object may use (isolate/object-limits.ts). */
  durableObjectMaxBytes?: number | undefined;
  /** The secret the ping service asks isolates for their counts with; a fresh one per config by default. */
  metricsSecret?: string;
  /** Root of the accounts' Durable Object storage; without it, objects keep their storage in memory. */
  durableObjectsDir?: string | undefined;
  /**
   * Set for the process of a script that hosts Durable Objects on several nodes: the process is one instance of
   * the script's workerd cluster (objects-cluster.ts), and its objects' disks are this node's cluster copies.
   */
  cluster?: ClusterConfig | undefined;
  /** Where service bindings reach another script's entrypoint (service-sockets.ts serviceSocketPath). */
  serviceSocket?: ((accountId: string, script: string, entrypoint: string) => string) | undefined;
  /**
   * Adds a socket per entrypoint other scripts bind to (the script's `entrypoints`), bound where
   * `--socket-addr svc-<i>` says: set for a script's own process, where callers reach it.
   */
  serveEntrypoints?: boolean;
}

/** A backend process's socket as the front processes reach it (see FunctionsRuntime: slots). */
export interface FrontSlot {
  /** The binding `S<index>` the routes table names. */
  index: number;
  /** `unix:<path>` of the backend's listening socket. */
  address: string;
}

/** What the config of the front processes is built from (front-config.ts). */
export interface FrontConfigInput {
  domain: string;
  slots: FrontSlot[];
  /** The directory of routes.json, which the routers re-read (write.ts writeFrontRoutes). */
  routesDir: string;
}
