/**
 * The S3 API (R2's S3-compatible endpoint) on its own port: SigV4 auth, S3's XML shapes and errors, over the
 * same storage engine as the binding and the /client/v4 object routes.
 *
 * `S3CredentialSource` is where access keys come from: `tokenAccessKeys(accounts)` turns API tokens into keys
 * as R2 does; temporary credentials plug in as another source (`chainSources`).
 */
export { S3Listener, type S3ListenerOptions } from './listener.ts';
export { ClusterStore, CLUSTER_STORE_ACCOUNT, CLUSTER_STORE_BUCKET, type ClusterStoreDeps } from './cluster-store.ts';
export { createS3Subsystem, type S3Subsystem } from './subsystem.ts';
export {
  chainSources,
  temporaryAccessKeys,
  tokenAccessKeys,
  type S3AccessKey,
  type S3Action,
  type S3CredentialSource,
} from './credentials.ts';
