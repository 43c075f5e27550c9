/**
 * Object storage over HTTP: the /client/v4 bucket and object routes, and the wire backend that
 * workerd's r2Bucket bindings talk to.
 *
 * Contract with the functions runtime: `platform.r2Backend.workerdService(accountId, bucketName)` gives
 * the `external` service (unix address + injected headers) to use for an r2Bucket binding, and
 * `platform.storage.getBucket(accountId, name)` tells whether the bucket exists.
 *
 * Contract with the S3 endpoint: `platform.tempCredentials.resolve(accessKeyId, sessionToken)` turns a
 * temporary credential into the secret to check SigV4 with and its grant (account, bucket, paths,
 * permission or actions, expiry; `grantAllowsAction` / `grantAllowsKey` / `grantAllowsListing` apply it).
 * An ordinary token's key pair is `platform.accounts.s3KeyPair(accessKeyId)`.
 */
export { r2Routes } from './routes.ts';
export { R2WireBackend, BUCKET_HEADER, SECRET_HEADER, type WorkerdR2Service, type LocalReads } from './wire/backend.ts';
export { createR2Subsystem, type R2Subsystem } from './subsystem.ts';
export { r2Migrations } from './migrations.ts';
export type { PublicAccessService, PublicBucketHandler, PublicHostDirectory } from './public/index.ts';
export {
  TemporaryCredentialService,
  grantAllowsAction,
  grantAllowsKey,
  grantAllowsListing,
  TEMP_PERMISSIONS,
  type TempCredentialLookup,
  type TempPermission,
  type TemporaryGrant,
} from './temp-credentials/index.ts';
// The S3 API sends object bodies the way the wire backend does.
