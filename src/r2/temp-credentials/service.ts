import { createHash } from 'node:crypto';
import type { Principal, S3KeyPair } from '../../accounts/index.ts';
import type { Clock } from '../../shared/clock.ts';
import { LedgeError } from '../../shared/errors.ts';
import { R2Errors } from '../../storage/index.ts';
import { signJwt, unverifiedClaims, verifyJwt, type JwtClaims } from './jwt.ts';
import { MAX_TEMP_TTL_SECONDS, type TempCredentialsRequest } from './schemas.ts';
import { TEMP_PERMISSIONS, VALID_ACTIONS, type TempPermission, type TemporaryGrant } from './scope.ts';

/** What the service needs of the rest of the platform (accounts' token lookup, storage's buckets). */
export interface TempCredentialDeps {
  s3KeyPair(accessKeyId: string): Promise<S3KeyPair | undefined>;
  bucketExists(accountId: string, bucket: string): Promise<boolean>;
  /** The `aud` claim: the S3 endpoint's host for an account (default `<account>.r2.localhost`). */
  audience?: ((accountId: string) => string) | undefined;
  /** Issue and expiry times (tests pass a clock they advance; default the system's). */
  clock: Clock;
}

export interface TempCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
}

/** Why a session token was not accepted: `expired` (S3's ExpiredToken) or anything else (InvalidToken). */
export type TempCredentialLookup = { ok: true; grant: TemporaryGrant } | { ok: false; reason: 'expired' | 'invalid' };

const WRITING: ReadonlySet<TempPermission> = new Set(['object-read-write', 'admin-read-write']);
const SESSION_PREFIX = 'jwt/';

/**
 * R2's temporary credentials, made as R2 documents them so that both API-minted and locally signed
 * ones work: the session token is base64("jwt/" + an HS256 JWT signed with the parent's secret access
 * key), claims `bucket`, `scope` (the permission), optional `paths` {prefixPaths, objectPaths} and
 * `actions`, `sub` = account, `iss` = parent access key id, `aud`, `iat`, `exp`; the temporary secret is
 * the SHA-256 hex of the JWT; the Access Key ID is the parent's.
 *
 * Nothing is stored: a lookup re-derives everything from the token and the parent's current record, so
 * revoking, disabling or expiring the parent, or removing its user from the account, ends every
 * credential derived from it at once, and no temporary secret is ever at rest.
 */
export class TemporaryCredentialService {
  readonly #deps: TempCredentialDeps;
  readonly #clock: Clock;

  constructor(deps: TempCredentialDeps) {
    this.#deps = deps;
    this.#clock = deps.clock;
  }

  /** POST /accounts/{a}/r2/temp-access-credentials on behalf of `caller`. */
  async mint(
    caller: Principal,
    accountId: string,
    request: TempCredentialsRequest,
    now = this.#clock.now(),
  ): Promise<TempCredentials> {
    const parent = await this.#deps.s3KeyPair(request.parentAccessKeyId);
    // Someone else's token, another account's, or none at all: one answer, so ids cannot be probed.
    if (!parent || parent.principal.userId !== caller.userId || !parent.principal.accountIds.has(accountId)) {
      throw R2Errors.invalidArgument(
        `parentAccessKeyId does not name an active API token of yours that can access account ${accountId}`,
      );
    }
    if (WRITING.has(request.permission) && parent.principal.readOnly) {
      throw new LedgeError(403, 10000, `a read-only parent token cannot grant ${request.permission}`);
    }
    if (!(await this.#deps.bucketExists(accountId, request.bucket))) throw R2Errors.noSuchBucket(request.bucket);
    const issuedAt = Math.floor(now / 1000);
    const claims: JwtClaims = {
      bucket: request.bucket,
      scope: request.permission,
      sub: accountId,
      iss: parent.accessKeyId,
      aud: this.#audience(accountId),
      iat: issuedAt,
      exp: issuedAt + request.ttlSeconds,
    };
    if (request.prefixes?.length || request.objects?.length) {
      claims['paths'] = { prefixPaths: request.prefixes ?? [], objectPaths: request.objects ?? [] };
    }
    const jwt = signJwt(claims, parent.secretAccessKey);
    return {
      accessKeyId: parent.accessKeyId,
      secretAccessKey: sha256Hex(jwt),
      sessionToken: Buffer.from(`${SESSION_PREFIX}${jwt}`, 'utf8').toString('base64'),
    };
  }

  /**
   * For the S3 endpoint: a request's Access Key ID and X-Amz-Security-Token (header or presigned query)
   * -> the secret to check its SigV4 signature with, the account, and the grant's scope.
   */
  async resolve(accessKeyId: string, sessionToken: string, now = this.#clock.now()): Promise<TempCredentialLookup> {
    const invalid = { ok: false, reason: 'invalid' } as const;
    const jwt = decodeSessionToken(sessionToken);
    if (!jwt || unverifiedClaims(jwt)?.['iss'] !== accessKeyId) return invalid;
    const parent = await this.#deps.s3KeyPair(accessKeyId);
    if (!parent) return invalid;
    const claims = verifyJwt(jwt, parent.secretAccessKey);
    if (!claims) return invalid;
    const grant = grantOf(claims, parent, sha256Hex(jwt));
    if (!grant || !parent.principal.accountIds.has(grant.accountId)) return invalid;
    const issuedAt = typeof claims['iat'] === 'number' ? claims['iat'] * 1000 : undefined;
    if (issuedAt !== undefined && grant.expiresAt - issuedAt > MAX_TEMP_TTL_SECONDS * 1000) return invalid;
    if (typeof claims['nbf'] === 'number' && claims['nbf'] * 1000 > now) return invalid;
    if (grant.expiresAt <= now) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  #audience(accountId: string): string {
    return this.#deps.audience?.(accountId) ?? `${accountId}.r2.localhost`;
  }
}

function decodeSessionToken(sessionToken: string): string | undefined {
  if (sessionToken.length > 64 * 1024 || !/^[A-Za-z0-9+/=_-]+$/.test(sessionToken)) return undefined;
  const text = Buffer.from(sessionToken, 'base64').toString('utf8');
  return text.startsWith(SESSION_PREFIX) ? text.slice(SESSION_PREFIX.length) : undefined;
}

/** The grant a verified token's claims describe, or undefined when they are not a usable credential. */
function grantOf(claims: JwtClaims, parent: S3KeyPair, secretAccessKey: string): TemporaryGrant | undefined {
  const { bucket, scope, sub, exp, actions, paths } = claims;
  if (typeof bucket !== 'string' || bucket === '' || typeof sub !== 'string' || typeof exp !== 'number') return;
  if (scope !== undefined && !(TEMP_PERMISSIONS as readonly unknown[]).includes(scope)) return;
  if (actions !== undefined && !(isStrings(actions) && actions.every((action) => VALID_ACTIONS.has(action)))) return;
  // R2: at least one of scope and actions.
  if (scope === undefined && (actions === undefined || actions.length === 0)) return;
  let prefixes: string[] = [];
  let objects: string[] = [];
  if (paths !== undefined) {
    if (paths === null || typeof paths !== 'object') return;
    const { prefixPaths = [], objectPaths = [] } = paths as Record<string, unknown>;
    if (!isStrings(prefixPaths) || !isStrings(objectPaths)) return;
    prefixes = prefixPaths;
    objects = objectPaths;
  }
  return {
    accessKeyId: parent.accessKeyId,
    secretAccessKey,
    accountId: sub,
    bucket,
    permission: scope as TempPermission | undefined,
    actions: actions !== undefined && actions.length > 0 ? actions : undefined,
    prefixes,
    objects,
    expiresAt: exp * 1000,
    parent: parent.principal,
  };
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
