import { emptyReply, xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Error, S3Errors } from '../errors.ts';
import { childText, parseXml, readSmallBody, renderXml } from '../xml.ts';

/** Location hints R2 takes as a LocationConstraint besides its region names. */
const LOCATION_HINTS = new Set(['apac', 'eeur', 'enam', 'weur', 'wnam', 'oc']);
const REGION_ALIASES = new Set(['', 'auto', 'us-east-1']);
const CONFIG_LIMIT = 64 * 1024;

export const owner = (accountId: string) => ({ ID: accountId, DisplayName: accountId });

/**
 * ListBuckets with R2's extension: `prefix`, `start-after`, `continuation-token`, `max-keys` (also as
 * `cf-*` headers), answered with IsTruncated / NextContinuationToken (and the same as cf-* headers).
 */
export async function listBuckets(request: S3Request): Promise<S3Reply> {
  const param = (name: string) => request.query.get(name) ?? headerOf(request, `cf-${name}`);
  const prefix = param('prefix') ?? '';
  const rawMax = param('max-keys');
  if (rawMax !== undefined && !/^\d+$/.test(rawMax)) throw S3Errors.invalidArgument('max-keys must be an integer.');
  const maxKeys = Math.min(Math.max(rawMax === undefined ? 1000 : Number(rawMax), 1), 1000);
  const token = param('continuation-token');
  const startAfter = token !== undefined ? decodeToken(token) : (param('start-after') ?? undefined);
  const found = await request.storage.buckets.list(request.accountId, {
    nameContains: prefix || undefined,
    startAfter,
    direction: 'asc',
    perPage: maxKeys,
  });
  const buckets = found.buckets.filter((b) => b.name.startsWith(prefix));
  const last = found.buckets.at(-1);
  const next = found.cursor && last ? Buffer.from(last.name, 'utf8').toString('base64url') : undefined;
  const headers: Record<string, string> = { 'cf-is-truncated': String(next !== undefined) };
  if (next) headers['cf-next-continuation-token'] = next;
  return xmlReply(
    renderXml('ListAllMyBucketsResult', {
      Buckets: { Bucket: buckets.map((b) => ({ Name: b.name, CreationDate: new Date(b.createdAt).toISOString() })) },
      Owner: owner(request.accountId),
      IsTruncated: next !== undefined,
      ContinuationToken: token,
      NextContinuationToken: next,
      Prefix: prefix || undefined,
    }),
    200,
    headers,
  );
}

function decodeToken(token: string): string {
  const name = Buffer.from(token, 'base64url').toString('utf8');
  if (name === '') throw S3Errors.invalidArgument('The continuation token provided is incorrect');
  return name;
}

function headerOf(request: S3Request, name: string): string | undefined {
  const value = request.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export async function headBucket(request: S3Request): Promise<S3Reply> {
  await request.bucket();
  return emptyReply(200, { 'x-amz-bucket-region': 'auto' });
}

/** CreateBucket: LocationConstraint auto / us-east-1 / empty, or one of R2's location hints. */
export async function createBucket(request: S3Request): Promise<S3Reply> {
  const headers = request.req.headers;
  if (headers['x-amz-bucket-object-lock-enabled'] === 'true') throw S3Errors.notImplemented('Object lock');
  if (Object.keys(headers).some((name) => name.startsWith('x-amz-grant-')))
    throw S3Errors.notImplemented('Bucket ACLs');
  const text = await readSmallBody(request.body().stream, CONFIG_LIMIT);
  let locationHint: string | undefined;
  if (text.trim() !== '') {
    const location = (childText(parseXml(text), 'LocationConstraint') ?? '').trim();
    if (LOCATION_HINTS.has(location.toLowerCase())) locationHint = location.toLowerCase();
    else if (!REGION_ALIASES.has(location)) throw S3Errors.invalidLocation();
  }
  const name = request.bucketName!;
  if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(name)) throw S3Errors.invalidBucketName();
  try {
    await request.storage.buckets.create(request.accountId, { name, locationHint });
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 10004) {
      throw new S3Error(
        409,
        'BucketAlreadyOwnedByYou',
        'Your previous request to create the named bucket succeeded and you already own it.',
      );
    }
    throw error;
  }
  return emptyReply(200, { location: `/${name}` });
}

export async function deleteBucket(request: S3Request): Promise<S3Reply> {
  await request.storage.buckets.delete(request.accountId, request.bucketName!);
  return emptyReply(204);
}

export async function getLocation(request: S3Request): Promise<S3Reply> {
  await request.bucket();
  return xmlReply(renderXml('LocationConstraint', {}).replace('></LocationConstraint>', '>auto</LocationConstraint>'));
}

/**
 * Ledge keeps no bucket default encryption (its blobs are not encrypted at rest by it), so the truthful
 * answer is S3's "no configuration" error rather than a claimed AES256 rule.
 */
export async function getEncryption(request: S3Request): Promise<S3Reply> {
  await request.bucket();
  throw new S3Error(
    404,
    'ServerSideEncryptionConfigurationNotFoundError',
    'The server side encryption configuration was not found',
  );
}
