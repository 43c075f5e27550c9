import type { S3Reply, S3Request } from './context.ts';
import { S3Errors } from './errors.ts';
import * as buckets from './ops/buckets.ts';
import * as copy from './ops/copy.ts';
import * as cors from './ops/cors.ts';
import * as lifecycle from './ops/lifecycle.ts';
import * as listing from './ops/list-objects.ts';
import * as multipart from './ops/multipart.ts';
import * as objects from './ops/objects.ts';

/** Bucket subresources R2 does not offer (its S3 compatibility tables): 501 NotImplemented. */
const BUCKET_NOT_OFFERED = [
  'acl',
  'policy',
  'policyStatus',
  'versioning',
  'versions',
  'object-lock',
  'tagging',
  'logging',
  'website',
  'notification',
  'replication',
  'requestPayment',
  'accelerate',
  'analytics',
  'intelligent-tiering',
  'inventory',
  'metrics',
  'ownershipControls',
  'publicAccessBlock',
];
const OBJECT_NOT_OFFERED = ['acl', 'tagging', 'retention', 'legal-hold', 'attributes', 'torrent', 'restore', 'select'];

/** An S3 operation: its name (what credentials are checked against) and what runs it. */
interface Operation {
  name: string;
  run: (request: S3Request) => Promise<S3Reply>;
  /** A listing's prefix (temporary credentials limited to prefixes may list only within them). */
  listing?: boolean;
}

const op = (name: string, run: Operation['run'], listing = false): Operation => ({ name, run, listing });

/** Picks the operation from method, address and subresource, as S3 does, checks the credential may, runs it. */
export function route(request: S3Request): Promise<S3Reply> {
  const versionId = request.query.get('versionId');
  if (versionId !== null && versionId !== 'null') throw S3Errors.notImplemented('Object versioning');
  const operation =
    request.bucketName === undefined
      ? serviceOperation(request)
      : request.key === undefined
        ? bucketOperation(request)
        : objectOperation(request);
  request.authorize(operation.name, {
    bucket: request.bucketName,
    ...(request.key !== undefined ? { key: request.key } : {}),
    ...(operation.listing ? { prefix: request.query.get('prefix') ?? '' } : {}),
  });
  return operation.run(request);
}

function serviceOperation(request: S3Request): Operation {
  if (request.method === 'GET') return op('ListBuckets', buckets.listBuckets);
  throw S3Errors.methodNotAllowed();
}

function bucketOperation(request: S3Request): Operation {
  const { method, query } = request;
  const offered = BUCKET_NOT_OFFERED.find((name) => query.has(name));
  if (offered) throw S3Errors.notImplemented(`${method} ?${offered}`);
  switch (method) {
    case 'HEAD':
      return op('HeadBucket', buckets.headBucket);
    case 'GET':
      if (query.has('location')) return op('GetBucketLocation', buckets.getLocation);
      if (query.has('encryption')) return op('GetBucketEncryption', buckets.getEncryption);
      if (query.has('lifecycle')) return op('GetBucketLifecycleConfiguration', lifecycle.getLifecycle);
      if (query.has('cors')) return op('GetBucketCors', cors.getCors);
      if (query.has('uploads')) return op('ListMultipartUploads', multipart.listUploads, true);
      if (query.get('list-type') === '2') return op('ListObjectsV2', listing.listObjectsV2, true);
      return op('ListObjectsV1', listing.listObjectsV1, true);
    case 'PUT':
      if (query.has('lifecycle')) return op('PutBucketLifecycleConfiguration', lifecycle.putLifecycle);
      if (query.has('cors')) return op('PutBucketCors', cors.putCors);
      if (query.has('encryption')) throw S3Errors.notImplemented('PutBucketEncryption');
      return op('CreateBucket', buckets.createBucket);
    case 'DELETE':
      if (query.has('cors')) return op('DeleteBucketCors', cors.deleteCors);
      if (query.has('lifecycle')) throw S3Errors.notImplemented('DeleteBucketLifecycle');
      if (query.has('encryption')) throw S3Errors.notImplemented('DeleteBucketEncryption');
      return op('DeleteBucket', buckets.deleteBucket);
    case 'POST':
      if (query.has('delete')) return op('DeleteObjects', objects.deleteObjects);
      throw S3Errors.notImplemented('POST Object (browser form uploads)');
    default:
      throw S3Errors.methodNotAllowed();
  }
}

function objectOperation(request: S3Request): Operation {
  const { method, query } = request;
  const offered = OBJECT_NOT_OFFERED.find((name) => query.has(name));
  if (offered) throw S3Errors.notImplemented(`${method} ?${offered}`);
  const uploadId = query.get('uploadId');
  const copySource = request.req.headers['x-amz-copy-source'] !== undefined;
  switch (method) {
    case 'GET':
      if (uploadId !== null) return op('ListParts', (r) => multipart.listParts(r, uploadId));
      return op('GetObject', objects.getObject);
    case 'HEAD':
      return op('HeadObject', objects.getObject);
    case 'PUT':
      if (uploadId !== null) {
        return copySource
          ? op('UploadPartCopy', (r) => copy.uploadPartCopy(r, uploadId))
          : op('UploadPart', (r) => multipart.uploadPart(r, uploadId));
      }
      return copySource ? op('CopyObject', copy.copyObject) : op('PutObject', objects.putObject);
    case 'POST':
      if (query.has('uploads')) return op('CreateMultipartUpload', multipart.createUpload);
      if (uploadId !== null) return op('CompleteMultipartUpload', (r) => multipart.completeUpload(r, uploadId));
      throw S3Errors.methodNotAllowed();
    case 'DELETE':
      if (uploadId !== null) return op('AbortMultipartUpload', (r) => multipart.abortUpload(r, uploadId));
      return op('DeleteObject', objects.deleteObject);
    default:
      throw S3Errors.methodNotAllowed();
  }
}
