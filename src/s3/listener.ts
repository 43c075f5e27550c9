import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { BackgroundService } from '../shared/background-service.ts';
import { createHttpServer } from '../shared/http-listener/http-server.ts';
import { listen } from '../shared/http-listener/listen.ts';
import type { PortSetting } from '../shared/http-listener/port-in-use.ts';
import { FileSender } from '../shared/http-listener/send-file.ts';
import { sendBody } from '../shared/http-listener/send-body.ts';
import { ClientGone } from '../shared/http-listener/send-stream.ts';
import { httpConnections, stopGracefully } from '../shared/http-listener/stop.ts';
import type { Clock } from '../shared/clock.ts';
import type { HttpTimeouts } from '../shared/http-timeouts.ts';
import type { Logger } from '../shared/logger.ts';
import { releaseBody, type StorageService } from '../storage/index.ts';
import { authenticate } from './authenticate.ts';
import type { S3Reply } from './context.ts';
import type { S3CredentialSource } from './credentials.ts';
import { s3CodeOf } from './errors.ts';
import { answerPreflight, corsHeadersFor } from './ops/cors.ts';
import { route } from './router.ts';
import { renderXml } from './xml.ts';

export interface S3ListenerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The setting that moves the port (`--s3-api-port`), named when the port is taken. */
  portSetting: PortSetting;
  storage: StorageService;
  credentials: S3CredentialSource;
  httpTimeouts: HttpTimeouts;
  /** Signed requests' time skew and presigned URLs' expiry are judged on it. */
  clock: Clock;
  logger: Logger;
}

/**
 * The S3 API on its own port (`--s3-api-port`): SigV4-authenticated requests in S3's shapes, on the same
 * buckets and objects as the binding and the /client/v4 routes (one storage engine, no state of its own).
 */
export class S3Listener implements BackgroundService {
  readonly name = 's3-api';
  readonly #options: S3ListenerOptions;
  readonly #files = new FileSender();
  #server: Server | undefined;
  #port: number | undefined;

  constructor(options: S3ListenerOptions) {
    this.#options = options;
  }

  /** The port once listening (undefined before start and after stop). */
  get port(): number | undefined {
    return this.#port;
  }

  async start(): Promise<void> {
    const { host, port, portSetting, httpTimeouts } = this.#options;
    const handle = (req: IncomingMessage, res: ServerResponse) => void this.#handle(req, res);
    const server = createHttpServer({ timeouts: httpTimeouts }, handle);
    // S3 ignores an Expect it does not know (Node would answer it 417 before any handler ran).
    server.on('checkExpectation', handle);
    const listening = await listen(server, { host, port, what: 'S3 API', setting: portSetting });
    this.#server = server;
    this.#port = listening;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#port = undefined;
    if (!server) return;
    await stopGracefully(server, httpConnections(server));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomBytes(8).toString('hex').toUpperCase();
    res.setHeader('x-amz-request-id', requestId);
    try {
      if (req.method === 'OPTIONS' && (await answerPreflight(req, res, this.#options))) return;
      const request = await authenticate(req, res, this.#options);
      // A browser reads the answer (errors too) only with the bucket's CORS headers.
      for (const [name, value] of Object.entries(await corsHeadersFor(request))) res.setHeader(name, value);
      await this.#send(req, res, await route(request));
    } catch (error) {
      this.#fail(req, res, error, requestId);
    }
  }

  async #send(req: IncomingMessage, res: ServerResponse, reply: S3Reply): Promise<void> {
    const headers: Record<string, string> = { ...reply.headers };
    const body = reply.body;
    if (body === undefined || req.method === 'HEAD') {
      if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) await releaseBody(body);
      if (headers['content-length'] === undefined && req.method !== 'HEAD') headers['content-length'] = '0';
      res.writeHead(reply.status, headers).end();
      return;
    }
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      headers['content-length'] = String(bytes.length);
      res.writeHead(reply.status, headers).end(bytes);
      return;
    }
    if (reply.length !== undefined) headers['content-length'] = String(reply.length);
    res.writeHead(reply.status, headers);
    try {
      await sendBody(res, body, this.#files);
    } catch (error) {
      res.destroy();
      if (!(error instanceof ClientGone)) this.#options.logger.error('s3 body failed mid-stream', { err: error });
    }
  }

  #fail(req: IncomingMessage, res: ServerResponse, error: unknown, requestId: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { status, code, message, details } = s3CodeOf(error);
    if (status >= 500 && status !== 501) this.#options.logger.error('s3 request failed', { err: error });
    const extra = (error as { headers?: Record<string, string> }).headers ?? {};
    // A body left unread (a refused upload) is not drained: the connection closes after the answer.
    if (!req.complete) res.setHeader('connection', 'close');
    if (req.method === 'HEAD' || status === 304) {
      res.writeHead(status, extra).end();
      return;
    }
    const xml = renderXml('Error', { Code: code, Message: message, ...details, RequestId: requestId }, '');
    res
      .writeHead(status, {
        ...extra,
        'content-type': 'application/xml',
        'content-length': String(Buffer.byteLength(xml)),
      })
      .end(xml);
  }
}
