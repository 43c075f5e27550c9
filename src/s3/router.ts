import type { S3Reply, S3Request } from './context.ts';
import { S3Errors } from './errors.ts';
import * as buckets from './ops/buckets.ts';
import * as copy from './ops/copy.ts';
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

/** Picks the operation from method, address and subresource, as S3 does. */
export function route(request: S3Request): Promise<S3Reply> {
  const { method, query } = request;
  const versionId = query.get('versionId');
  if (versionId !== null && versionId !== 'null') throw S3Errors.notImplemented('Object versioning');
  if (request.bucketName === undefined) {
    if (method === 'GET') return buckets.listBuckets(request);
    throw S3Errors.methodNotAllowed();
  }
  if (request.key === undefined) return routeBucket(request);
  return routeObject(request);
}

function routeBucket(request: S3Request): Promise<S3Reply> {
  const { method, query } = request;
  const offered = BUCKET_NOT_OFFERED.find((name) => query.has(name));
  if (offered) throw S3Errors.notImplemented(`${method} ?${offered}`);
  if (query.has('cors')) throw S3Errors.notImplemented('Bucket CORS on this server');
  switch (method) {
    case 'HEAD':
      return buckets.headBucket(request);
    case 'GET':
      if (query.has('location')) return buckets.getLocation(request);
      if (query.has('encryption')) return buckets.getEncryption(request);
      if (query.has('lifecycle')) return lifecycle.getLifecycle(request);
      if (query.has('uploads')) return multipart.listUploads(request);
      if (query.get('list-type') === '2') return listing.listObjectsV2(request);
      return listing.listObjectsV1(request);
    case 'PUT':
      if (query.has('lifecycle')) return lifecycle.putLifecycle(request);
      if (query.has('encryption')) throw S3Errors.notImplemented('PutBucketEncryption');
      return buckets.createBucket(request);
    case 'DELETE':
      if (query.has('lifecycle')) throw S3Errors.notImplemented('DeleteBucketLifecycle');
      if (query.has('encryption')) throw S3Errors.notImplemented('DeleteBucketEncryption');
      return buckets.deleteBucket(request);
    case 'POST':
      if (query.has('delete')) return objects.deleteObjects(request);
      throw S3Errors.notImplemented('POST Object (browser form uploads)');
    default:
      throw S3Errors.methodNotAllowed();
  }
}

function routeObject(request: S3Request): Promise<S3Reply> {
  const { method, query } = request;
  const offered = OBJECT_NOT_OFFERED.find((name) => query.has(name));
  if (offered) throw S3Errors.notImplemented(`${method} ?${offered}`);
  const uploadId = query.get('uploadId');
  switch (method) {
    case 'GET':
      if (uploadId !== null) return multipart.listParts(request, uploadId);
      return objects.getObject(request);
    case 'HEAD':
      return objects.getObject(request);
    case 'PUT':
      if (uploadId !== null) {
        return request.req.headers['x-amz-copy-source'] !== undefined
          ? copy.uploadPartCopy(request, uploadId)
          : multipart.uploadPart(request, uploadId);
      }
      if (request.req.headers['x-amz-copy-source'] !== undefined) return copy.copyObject(request);
      return objects.putObject(request);
    case 'POST':
      if (query.has('uploads')) return multipart.createUpload(request);
      if (uploadId !== null) return multipart.completeUpload(request, uploadId);
      throw S3Errors.methodNotAllowed();
    case 'DELETE':
      if (uploadId !== null) return multipart.abortUpload(request, uploadId);
      return objects.deleteObject(request);
    default:
      throw S3Errors.methodNotAllowed();
  }
}
