import { createHash } from 'node:crypto';
import { Agent, type AgentOptions } from 'node:http';
import type { LookupFunction } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
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
