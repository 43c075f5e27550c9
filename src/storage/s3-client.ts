import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  CreateBucketCommand,
  HeadBucketCommand,
  S3Client,
  S3ServiceException,
  type BucketLocationConstraint,
} from '@aws-sdk/client-s3';

/** Where blobs live on an S3-compatible service (see docs/scale-out.md for AWS, R2, MinIO, Ceph, Swift). */
export interface S3Settings {
  /** https://host[:port] of the service; undefined: AWS S3 for `region`. */
  endpoint?: string | undefined;
  region: string;
  bucket: string;
  /** With neither key set, the SDK's default chain applies (AWS_PROFILE, instance roles, ...). */
  accessKeyId?: string | undefined;
  secretAccessKey?: string | undefined;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<host>/<key>` (MinIO, Ceph RGW, Swift need it). */
  forcePathStyle: boolean;
  /** Prepended to every blob key, so that one bucket can hold other things too ('' or ends with '/'). */
  prefix: string;
}

/**
 * Sockets kept open to the service. A large GET holds its socket for as long as the client reads, so
 * this bounds concurrent blob reads and writes; beyond it requests queue for a socket.
 */
const MAX_SOCKETS = 64;

/** An S3 client for `settings`, shaped for what S3-compatible services accept (see each option). */
export function createS3Client(settings: S3Settings): S3Client {
  const agentOptions = { keepAlive: true, maxSockets: MAX_SOCKETS };
  const client = new S3Client({
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    ...(settings.accessKeyId && settings.secretAccessKey
      ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } }
      : {}),
    // The SDK's default (WHEN_SUPPORTED) signs bodies as aws-chunked with a trailing CRC, which Swift's
    // s3api (and older MinIO/Ceph) refuse with 501. Our bodies are buffers of known length: plain
    // signed payloads work everywhere, and integrity is checked by our own digests end to end.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      httpAgent: new HttpAgent(agentOptions),
      httpsAgent: new HttpsAgent(agentOptions),
      connectionTimeout: 10_000,
    },
  });
  addDeleteObjectsContentMd5(client);
  return client;
}

/**
 * DeleteObjects must carry a body checksum. The SDK sends x-amz-checksum-crc32; services older than that
 * header (Swift's s3api: "Missing required header for this request: Content-MD5") want Content-MD5,
 * which AWS and the others accept as well. Added after serialization, when the XML body exists.
 */
function addDeleteObjectsContentMd5(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && request.headers && typeof request.body === 'string') {
        request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', name: 'ledgeDeleteObjectsContentMd5', priority: 'low' },
  );
}

/**
 * Checks at start that the bucket is reachable with these credentials, creating it when missing, so a
 * misconfiguration fails the start with a message instead of the first upload. Never names the secret.
 */
export async function ensureBucket(client: S3Client, settings: S3Settings): Promise<void> {
  const where = `bucket ${settings.bucket} at ${settings.endpoint ?? `AWS S3 (${settings.region})`}`;
  try {
    await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
    return;
  } catch (error) {
    if (statusOf(error) !== 404)
      throw new Error(`S3 blob store: cannot reach ${where}: ${describe(error)}`, { cause: error });
  }
  try {
    // AWS creates a bucket in us-east-1 unless told otherwise (and refuses a mismatch with the client's
    // region); other services pick their own location and may not know AWS region names.
    const elsewhere = settings.endpoint === undefined && settings.region !== 'us-east-1';
    await client.send(
      new CreateBucketCommand({
        Bucket: settings.bucket,
        ...(elsewhere
          ? { CreateBucketConfiguration: { LocationConstraint: settings.region as BucketLocationConstraint } }
          : {}),
      }),
    );
  } catch (error) {
    // Another node sharing the bucket may have created it in between.
    if (error instanceof S3ServiceException && error.name === 'BucketAlreadyOwnedByYou') return;
    throw new Error(`S3 blob store: ${where} does not exist and cannot be created: ${describe(error)}`, {
      cause: error,
    });
  }
}

/** The HTTP status of an SDK error (undefined for network errors). */
export function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** An S3 error as one line: its code, status and message (none of which hold credentials). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = statusOf(error);
  // HeadBucket answers have no body: a 403 arrives as a bare "Forbidden"/"UnknownError".
  const hint = status === 403 ? ' (check the access key and secret)' : '';
  return `${error.name}${status ? ` (HTTP ${status})` : ''}: ${error.message}${hint}`;
}
