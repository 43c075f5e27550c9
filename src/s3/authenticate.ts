import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIpAllowed } from '../shared/request-ip.ts';
import type { StorageService } from '../storage/index.ts';
import { addressOf } from './address.ts';
import { openBody, type RequestBody } from './body.ts';
import type { S3Request } from './context.ts';
import { isReadOperation, type S3CredentialSource } from './credentials.ts';
import { S3Errors } from './errors.ts';
import { parseSignedRequest, signingKey, verifySignature } from './sigv4.ts';
import type { Clock } from '../shared/clock.ts';

/**
 * Checks a request's SigV4 signature (header or presigned query) against the access key's secret and
 * resolves what it may touch: the account named by the host, or the credential's only account on a bare
 * address. Nothing is read from the body before the signature holds.
 */
export async function authenticate(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { storage: StorageService; credentials: S3CredentialSource; clock: Clock },
): Promise<S3Request> {
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const rawPath = mark === -1 ? url : url.slice(0, mark);
  const rawQuery = mark === -1 ? '' : url.slice(mark + 1);
  const query = new URLSearchParams(rawQuery);
  const method = req.method ?? 'GET';

  const signed = parseSignedRequest(req.headers, query, deps.clock.now());
  if (!signed) throw S3Errors.accessDenied('Anonymous access is not allowed: sign the request with SigV4.');
  const accessKey = await deps.credentials.lookup(signed.accessKeyId, signed.sessionToken);
  if (!accessKey) throw S3Errors.invalidAccessKeyId();
  if (!verifySignature({ method, rawPath, rawQuery, rawHeaders: req.rawHeaders }, signed, accessKey.secret)) {
    throw S3Errors.signatureDoesNotMatch();
  }

  const address = addressOf(req.headers.host, rawPath);
  const principal = accessKey.principal;
  // The key pair is an API token: its condition.request_ip holds here as on the API.
  if (!requestIpAllowed(principal.token?.condition, req.socket.remoteAddress)) {
    throw S3Errors.accessDenied(`Cannot use the access token from location: ${req.socket.remoteAddress ?? 'unknown'}`);
  }
  let accountId = address.accountId;
  if (accountId === undefined) {
    const accounts = [...principal.accountIds];
    if (accounts.length !== 1) {
      throw S3Errors.invalidRequest(
        accounts.length === 0
          ? 'This credential has access to no account.'
          : 'This credential has access to several accounts: address one as <account_id>.r2.<host>.',
      );
    }
    accountId = accounts[0]!;
  }
  if (!principal.accountIds.has(accountId)) throw S3Errors.accessDenied();

  let body: RequestBody | undefined;
  const storage = deps.storage;
  const request: S3Request = {
    req,
    res,
    method,
    accountId,
    bucketName: address.bucket,
    key: address.key,
    query,
    accessKey,
    storage,
    clock: deps.clock,
    body: () => (body ??= openBody(req, signed, signingKey(accessKey.secret, signed.date, signed.region))),
    bucket: async () => {
      if (address.bucket === undefined) throw S3Errors.noSuchBucket();
      const bucket = await storage.getBucket(accountId, address.bucket);
      if (!bucket) throw S3Errors.noSuchBucket();
      return bucket;
    },
    authorize: (operation, target) => {
      if (!isReadOperation(operation) && principal.readOnly) {
        throw S3Errors.accessDenied('This credential is read-only.');
      }
      if (accessKey.permits && !accessKey.permits({ accountId, operation, ...target })) throw S3Errors.accessDenied();
    },
  };
  return request;
}
