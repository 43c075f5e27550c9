import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodySource, BucketRecord, StorageService } from '../storage/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { RequestBody } from './body.ts';
import type { S3AccessKey } from './credentials.ts';

/** One authenticated S3 request, as the operations see it. */
export interface S3Request {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  accountId: string;
  bucketName: string | undefined;
  key: string | undefined;
  query: URLSearchParams;
  accessKey: S3AccessKey;
  storage: StorageService;
  /** The platform's time (the dates the answers carry). */
  clock: Clock;
  /** The decoded, checked body (opened once; operations without a body never call it). */
  body(): RequestBody;
  /** The named bucket of the account, or NoSuchBucket. */
  bucket(): Promise<BucketRecord>;
  /**
   * Refuses what the credential may not do: writes with a read-only token, anything outside a temporary
   * credential's grant (its bucket, paths, permission).
   */
  authorize(operation: string, target: { bucket: string | undefined; key?: string; prefix?: string }): void;
}

/** What an operation answers; the listener writes it. */
export interface S3Reply {
  status: number;
  headers?: Record<string, string> | undefined;
  /** XML text or bytes, or an object read's body (storage's BodySource) with its `length`. */
  body?: string | Buffer | BodySource | undefined;
  length?: number | undefined;
}

export const xmlReply = (body: string, status = 200, headers: Record<string, string> = {}): S3Reply => ({
  status,
  headers: { 'content-type': 'application/xml', ...headers },
  body,
});

export const emptyReply = (status = 200, headers: Record<string, string> = {}): S3Reply => ({ status, headers });
