import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CommonErrors, isLedgeError, LedgeError } from '../../shared/errors.ts';
import { DEFAULT_HTTP_TIMEOUTS } from '../../shared/http-timeouts.ts';
import { createHttpServer } from '../../shared/http-listener/http-server.ts';
import { listenPrivately } from '../../shared/http-listener/listen.ts';
import { FileSender } from '../../shared/http-listener/send-file.ts';
import { sendBody } from '../../shared/http-listener/send-body.ts';
import { ClientGone } from '../../shared/http-listener/send-stream.ts';
import { httpConnections, stopGracefully } from '../../shared/http-listener/stop.ts';
import { newSecret } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BucketRecord, StorageService } from '../../storage/index.ts';
import { CACHEABLE_METADATA_KEY, LOCAL_BODY_METADATA_KEY, R2_LIMITS, R2Errors } from '../../storage/index.ts';
import { handleWireRequest, type WireOptions, type WireReply } from './handlers.ts';
import { WireRequestSchema, type WireRequest } from './protocol.ts';
import { discardRequestBody, splitWriteBody, type WriteBody } from './request-body.ts';
import type { LedgeMetrics } from '../../shared/ledge-metrics.ts';

export const BUCKET_HEADER = 'x-ledge-r2-bucket';
export const SECRET_HEADER = 'x-ledge-r2-secret';
/** Marks the runtime's own local-read binding (see localReads): a per-account key, injected by workerd. */
export const LOCAL_HEADER = 'x-ledge-r2-local';
/**
 * The JSON before a write's value is read into memory whole: the largest a function can legitimately
 * send (a delete of 1,000 keys of 1,024 bytes, a completion of 10,000 parts) is a few MiB.
 */
const MAX_REQUEST_JSON_BYTES = 32 * 1024 * 1024;
/**
 * The most a refused write's unread rest is read (and dropped) before answering: the largest write the
 * binding can make. A longer body could never have been accepted, so its connection is closed instead.
 */
const DRAIN_LIMIT = MAX_REQUEST_JSON_BYTES + R2_LIMITS.maxSinglePutBytes;

/** How the functions runtime reads one bucket's large bodies itself (see R2WireBackend.localReads). */
export interface LocalReads {
  /** The bucket's blob directory, handed read-only to the isolates of scripts bound to it. */
  directory: string;
  /** The hidden r2Bucket binding whose gets may be answered with a file instead of bytes. */
  service: WorkerdR2Service;
  /** The custom metadata key under which such a get's answer names the file (relative to `directory`). */
  metadataKey: string;
  /**
   * Set when this process is the store's only writer: the key under which the hidden binding's answers are
   * marked cacheable (the runtime may then keep small objects, see storage/object-changes.ts).
   */
  cacheableKey?: string | undefined;
}

/** What the runtime puts into a workerd `external` service for an r2Bucket binding. */
export interface WorkerdR2Service {
  address: string;
  injectRequestHeaders: { name: string; value: string }[];
}

/**
 * The service behind workerd's `r2Bucket` bindings (reference r2.md §2), on a unix socket (mode 0600)
 * in the data dir. Only workerd as configured by us can use it: every request must carry the per-boot
 * secret and the bucket identity, both injected by workerd (`injectRequestHeaders` replaces any
 * same-named header a function might send). Raw node:http so bodies stream in both directions.
 */
export class R2WireBackend {
  readonly name = 'r2-backend';
  readonly socketPath: string;
  readonly #storage: StorageService;
  readonly #logger: Logger;
  readonly #secret = newSecret(32);
  readonly #secretBytes = Buffer.from(this.#secret, 'utf8');
  /** Per boot; each account's local-read key is derived from it (see localReads). */
  readonly #localSecret = newSecret(32);
  readonly #localKeys = new Map<string, string>();
  #localBodies = 0;
  #calls = 0;
  #server: Server | undefined;
  readonly #files = new FileSender();
  readonly #metrics: LedgeMetrics | undefined;

  constructor(storage: StorageService, socketPath: string, logger: Logger, metrics?: LedgeMetrics) {
    this.#metrics = metrics;
    this.#storage = storage;
    this.socketPath = socketPath;
    this.#logger = logger;
  }

  /** Bodies answered from an open blob file through the reused buffers (observability; tests). */
  get fileBodies(): number {
    return this.#files.started;
  }

  /** Binding calls received (observability; tests check what the isolates' caches answered themselves). */
  get calls(): number {
    return this.#calls;
  }

  /** Gets answered without their bytes, which the isolate read from the blob file itself (see localReads). */
  get localBodies(): number {
    return this.#localBodies;
  }

  workerdService(accountId: string, bucketName: string): WorkerdR2Service {
    return {
      address: `unix:${this.socketPath}`,
      injectRequestHeaders: [
        { name: BUCKET_HEADER, value: `${accountId}/${bucketName}` },
        { name: SECRET_HEADER, value: this.#secret },
      ],
    };
  }

  /**
   * Large whole-object gets of a bucket whose blobs are files here can be answered without their bytes:
   * the isolate reads the blob file itself through a read-only `disk` service on that bucket's blob
   * directory. That takes this process (and a copy through the unix socket) out of the body's path;
   * bench/functions GET 1 MiB, see docs/benchmarks.md. Undefined when blobs are not local (S3).
   *
   * Only gets through the runtime's own hidden binding (`service`) are answered that way, never a get
   * through the function's binding: the hidden one carries LOCAL_HEADER with a key derived per account
   * from a per-boot secret, injected by workerd (no JavaScript ever holds it). So no user code, even one
   * calling the binding prototype's own `get`, sees a file name, and no stored metadata can name one
   * (reserved keys are refused on every write and dropped from every answer, see wireObject).
   */
  localReads(accountId: string, bucketName: string): LocalReads | undefined {
    const directory = this.#storage.bucketBlobDirectory(accountId, bucketName);
    if (directory === undefined) return undefined;
    const service = this.workerdService(accountId, bucketName);
    service.injectRequestHeaders.push({ name: LOCAL_HEADER, value: this.#localKey(accountId) });
    const cacheableKey = this.#storage.objectChanges ? CACHEABLE_METADATA_KEY : undefined;
    return { directory, service, metadataKey: LOCAL_BODY_METADATA_KEY, cacheableKey };
  }

  #localKey(accountId: string): string {
    let key = this.#localKeys.get(accountId);
    if (key === undefined) {
      key = createHmac('sha256', this.#localSecret).update(`local-reads:${accountId}`).digest('base64url');
      this.#localKeys.set(accountId, key);
    }
    return key;
  }

  /** Whether a request comes through an account's local-read binding; a wrong key is refused outright. */
  #isLocalRead(req: IncomingMessage, bucket: BucketRecord): boolean {
    const presented = req.headers[LOCAL_HEADER];
    if (presented === undefined) return false;
    const expected = Buffer.from(this.#localKey(bucket.accountId), 'utf8');
    const bytes = Buffer.from(String(presented), 'utf8');
    if (bytes.length !== expected.length || !timingSafeEqual(bytes, expected)) {
      throw new LedgeError(403, 10003, 'Access denied: this endpoint serves the runtime only.');
    }
    return true;
  }

  async start(): Promise<void> {
    await mkdir(dirname(this.socketPath), { recursive: true, mode: 0o700 });
    await rm(this.socketPath, { force: true });
    // Node's default request timeout (5 min) would cut a function's 5 GiB put through the binding short.
    const server = createHttpServer(
      { timeouts: { requestMs: DEFAULT_HTTP_TIMEOUTS.requestMs, keepAliveMs: DEFAULT_HTTP_TIMEOUTS.keepAliveMs } },
      (req, res) => void this.#serve(req, res),
    );
    await listenPrivately(server, this.socketPath);
    await chmod(this.socketPath, 0o600);
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    await stopGracefully(server, httpConnections(server));
    await rm(this.socketPath, { force: true });
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.#calls++;
    const state: { body?: WriteBody; trusted?: boolean } = {};
    let reply: WireReply | undefined;
    let failure: unknown;
    try {
      this.#authenticate(req);
      state.trusted = true;
      const bucket = await this.#bucket(req);
      const options: WireOptions = this.#isLocalRead(req, bucket)
        ? { localBodyKey: LOCAL_BODY_METADATA_KEY, cache: this.#storage.objectChanges }
        : {};
      reply = await this.#dispatch(req, bucket, state, options);
    } catch (error) {
      failure = error;
    }
    if (!req.complete && !(await this.#drain(req, state))) {
      res.setHeader('connection', 'close');
      res.once('finish', () => req.destroy());
    }
    if (reply) await this.#send(res, reply).catch((error: unknown) => this.#sendError(res, error));
    else this.#sendError(res, failure);
  }

  /**
   * Reads and drops what a refused write left unread before answering. workerd reads the answer only
   * once it has sent the whole value: answering and closing earlier resets the connection under it,
   * and the function sees "Network connection lost." instead of R2's result. Only for workerd (the
   * secret matched) and within the largest write the binding can make; false when the connection must
   * be closed instead.
   */
  async #drain(req: IncomingMessage, state: { body?: WriteBody; trusted?: boolean }): Promise<boolean> {
    const declared = Number(req.headers['content-length']);
    if (!state.trusted || !Number.isSafeInteger(declared) || declared > DRAIN_LIMIT) return false;
    const drained = state.body ? state.body.discardRest(DRAIN_LIMIT) : discardRequestBody(req, DRAIN_LIMIT);
    return drained.catch(() => false);
  }

  #authenticate(req: IncomingMessage): void {
    const secret = req.headers[SECRET_HEADER];
    if (typeof secret !== 'string' || !this.#isSecret(secret) || typeof req.headers[BUCKET_HEADER] !== 'string') {
      throw new LedgeError(403, 10003, 'Access denied: this endpoint serves the runtime only.');
    }
  }

  async #bucket(req: IncomingMessage): Promise<BucketRecord> {
    const identity = String(req.headers[BUCKET_HEADER]);
    const slash = identity.indexOf('/');
    const accountId = identity.slice(0, slash);
    const name = identity.slice(slash + 1);
    const bucket = slash > 0 ? await this.#storage.getBucket(accountId, name) : undefined;
    if (!bucket) throw R2Errors.noSuchBucket(name);
    return bucket;
  }

  /**
   * Constant time in the presented value. The secret's length is no secret (a fixed-size random token),
   * so comparing lengths first leaks nothing and saves hashing both sides on every binding call.
   */
  #isSecret(presented: string): boolean {
    const bytes = Buffer.from(presented, 'utf8');
    return bytes.length === this.#secretBytes.length && timingSafeEqual(bytes, this.#secretBytes);
  }

  async #dispatch(
    req: IncomingMessage,
    bucket: BucketRecord,
    state: { body?: WriteBody },
    options: WireOptions,
  ): Promise<WireReply> {
    if (req.method === 'GET') {
      const header = req.headers['cf-r2-request'];
      if (typeof header !== 'string') throw R2Errors.invalidArgument('missing cf-r2-request header');
      // Node decodes header values as latin1; workerd sends raw UTF-8 (non-ASCII keys).
      const request = parseRequest(Buffer.from(header, 'latin1'));
      return this.#counted(
        request,
        0,
        await handleWireRequest(this.#storage, bucket, request, emptyBody(), 0, options),
      );
    }
    if (req.method === 'PUT') {
      const metadataSize = Number(req.headers['cf-r2-metadata-size']);
      const contentLength = Number(req.headers['content-length']);
      if (!Number.isSafeInteger(metadataSize) || metadataSize < 0)
        throw R2Errors.invalidArgument('invalid cf-r2-metadata-size');
      if (!Number.isSafeInteger(contentLength) || contentLength < metadataSize) {
        throw new LedgeError(411, 10033, 'Content-Length is required and must cover the metadata.');
      }
      if (metadataSize > MAX_REQUEST_JSON_BYTES) throw R2Errors.metadataTooLarge();
      state.body = await splitWriteBody(req, metadataSize);
      const request = parseRequest(state.body.metadata);
      const valueSize = contentLength - metadataSize;
      return this.#counted(
        request,
        valueSize,
        await handleWireRequest(this.#storage, bucket, request, state.body.value, valueSize),
      );
    }
    throw CommonErrors.methodNotAllowed(req.method ?? '?');
  }

  /** Counts a binding call that succeeded, with the value bytes it stored and the object bytes it answers. */
  #counted(request: WireRequest, bytesIn: number, reply: WireReply): WireReply {
    if (reply.localBytes !== undefined) this.#localBodies++;
    this.#metrics?.r2(request.method, 'binding', bytesIn, reply.body?.length ?? reply.localBytes ?? 0);
    return reply;
  }

  async #send(res: ServerResponse, reply: WireReply): Promise<void> {
    const json = Buffer.from(JSON.stringify(reply.json), 'utf8');
    res.statusCode = reply.status;
    res.setHeader('cf-r2-metadata-size', json.length);
    res.setHeader('content-length', json.length + (reply.body?.length ?? 0));
    if (reply.status === 412) res.setHeader('cf-r2-error', errorHeader(R2Errors.preconditionFailed()));
    if (!reply.body) {
      res.end(json);
      return;
    }
    await sendBody(res, reply.body.data, this.#files, json);
  }

  #sendError(res: ServerResponse, error: unknown): void {
    if (error instanceof ClientGone) {
      // A function's client cancelled (or a load test stopped) mid-body: routine, not a server fault.
      this.#logger.debug('r2 client went away mid-body');
      return;
    }
    const failure = isLedgeError(error) ? error : CommonErrors.internal(error);
    if (failure.status >= 500) this.#logger.error('r2 backend request failed', { err: error });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.statusCode = failure.status;
    res.setHeader('cf-r2-error', errorHeader(failure));
    res.setHeader('content-length', 0);
    res.end();
  }
}

function parseRequest(bytes: Buffer): WireRequest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw R2Errors.invalidArgument('The binding request is not valid JSON.');
  }
  const parsed = WireRequestSchema.safeParse(value);
  if (!parsed.success)
    throw R2Errors.invalidArgument(`Unsupported binding request: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function errorHeader(error: LedgeError): string {
  // Header values must be latin1-safe: escape anything else (JSON stays valid).
  return JSON.stringify({ version: 1, v4code: error.code, message: error.message }).replace(
    /[\u007f-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

async function* emptyBody(): AsyncIterable<Uint8Array> {}
