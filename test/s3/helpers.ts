import { execFile } from 'node:child_process';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync, type Dirent } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Agent, type AgentOptions } from 'node:http';
import type { LookupFunction } from 'node:net';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { TestLedge } from '../helpers/ledge.ts';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The S3 key pair of a token, as R2 makes it: the token's id, and the SHA-256 hex of its value. */
export async function s3CredentialsOf(ledge: TestLedge, token = ledge.apiToken): Promise<S3Credentials> {
  const response = await fetch(`${ledge.apiUrl}/user/tokens/verify`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { result: { id: string } };
  return { accessKeyId: body.result.id, secretAccessKey: createHash('sha256').update(token).digest('hex') };
}

export function s3Port(ledge: TestLedge): number {
  const port = ledge.server.platform.s3Api.port;
  if (port === undefined) throw new Error('the S3 API is not listening');
  return port;
}

/** Resolves every name to 127.0.0.1 (`<account>.r2.localhost`, `<bucket>.<account>.r2.localhost`). */
export const loopbackLookup = ((_host: string, options: unknown, callback: unknown) => {
  const cb = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
  const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
  if (all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
}) as LookupFunction;

export function loopbackAgent(options: AgentOptions = {}): Agent {
  return new Agent({ ...options, keepAlive: true, lookup: loopbackLookup } as AgentOptions);
}

/**
 * An SDK client on the S3 port: path style on 127.0.0.1 by default; `host: 'account'` addresses
 * `<account>.r2.localhost` (path style), `host: 'virtual'` `<bucket>.<account>.r2.localhost`.
 */
export function s3Client(
  ledge: TestLedge,
  credentials: S3Credentials,
  options: { host?: 'bare' | 'account' | 'virtual'; region?: string } = {},
): S3Client {
  const host = options.host ?? 'bare';
  const port = s3Port(ledge);
  const endpoint = host === 'bare' ? `http://127.0.0.1:${port}` : `http://${ledge.accountId}.r2.localhost:${port}`;
  return new S3Client({
    endpoint,
    region: options.region ?? 'auto',
    forcePathStyle: host !== 'virtual',
    credentials,
    // The SDK builds its node:http handler from these options.
    requestHandler: { httpAgent: loopbackAgent() },
  });
}

export async function bodyText(body: unknown): Promise<string> {
  return (body as { transformToString(): Promise<string> }).transformToString();
}

export async function bodyBytes(body: unknown): Promise<Buffer> {
  return Buffer.from(await (body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
}

export const md5Hex = (data: Uint8Array | string) => createHash('md5').update(data).digest('hex');

/** node:crypto behind the Checksum interface the SDK's signer takes (HMAC when given a secret). */
export class NodeSha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = secret === undefined || typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer);
    this.#hash = key === undefined ? createHash('sha256') : createHmac('sha256', key);
  }
  update(data: Uint8Array | string): void {
    this.#hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return this.#hash.digest();
  }
  reset(): void {}
}

export interface SignRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
  region?: string;
  /** x-amz-content-sha256 (default: the SHA-256 hex of the body). */
  payloadHash?: string;
}

export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  signature: string;
  amzDate: string;
  scope: string;
  signingKey: Buffer;
}

/**
 * Signs a request with the AWS SDK's own SigV4 signer (for what the S3 client does not send: an empty
 * region, signed aws-chunked bodies, bad checksums), and derives the signing key the chunks need.
 */
export async function signRequest(
  ledge: TestLedge,
  credentials: S3Credentials,
  request: SignRequest,
): Promise<SignedRequest> {
  const port = s3Port(ledge);
  const region = request.region ?? 'auto';
  const signer = new SignatureV4({
    credentials,
    region,
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false,
    applyChecksum: false,
  });
  const payloadHash =
    request.payloadHash ??
    createHash('sha256')
      .update(request.body ?? '')
      .digest('hex');
  const [path = '', search = ''] = request.path.split(/\?(.*)/s);
  const query: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) query[name] = value;
  const signed = await signer.sign({
    method: request.method,
    protocol: 'http:',
    hostname: '127.0.0.1',
    port,
    path,
    query,
    headers: { host: `127.0.0.1:${port}`, 'x-amz-content-sha256': payloadHash, ...request.headers },
  });
  const signature = /Signature=([0-9a-f]+)/.exec(String(signed.headers['authorization']))![1]!;
  const amzDate = String(signed.headers['x-amz-date']);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') headers[name] = String(value);
  const signingKey = [amzDate.slice(0, 8), region, 's3', 'aws4_request'].reduce<Buffer>(
    (key, part) => createHmac('sha256', key).update(part).digest(),
    Buffer.from(`AWS4${credentials.secretAccessKey}`),
  );
  return {
    url: `http://127.0.0.1:${port}${request.path}`,
    headers,
    signature,
    amzDate,
    scope: `${amzDate.slice(0, 8)}/${region}/s3/aws4_request`,
    signingKey,
  };
}

/** signRequest, then sent with fetch. */
export async function signedFetch(
  ledge: TestLedge,
  credentials: S3Credentials,
  request: SignRequest,
): Promise<{ response: Response }> {
  const signed = await signRequest(ledge, credentials, request);
  return { response: await fetch(signed.url, { method: request.method, headers: signed.headers, body: request.body }) };
}

/** A tree of `count` small files in nested directories (d<i>/e<j>/f<k>.txt), contents named by path. */
export function makeTree(root: string, count: number): string[] {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const path = `d${i % 10}/e${Math.floor(i / 10) % 10}/f${i}.txt`;
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), `file ${path}\n`.repeat((i % 7) + 1));
    paths.push(path);
  }
  return paths.sort();
}

/** Every file under `root`, as sorted relative paths. */
export function listTree(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** The first of `candidates` that exists as a file, else the bare name (found on PATH). */
export function tool(name: string, candidates: string[] = [`/usr/bin/${name}`]): string {
  return candidates.find((path) => existsSync(path)) ?? name;
}

/** Runs a command line tool, failing with its output when it exits non-zero. */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      command,
      args,
      {
        env: options.env,
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 300_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolvePromise({ stdout, stderr });
      },
    );
  });
}

/** The S3 error a request fails with (anything else thrown is rethrown; success fails the test). */
export async function failure(promise: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof S3ServiceException) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}
