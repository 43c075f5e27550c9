import { createHash, createHmac, hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { S3Errors } from './errors.ts';

export const ALGORITHM = 'AWS4-HMAC-SHA256';
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** The regions R2 answers to: `auto`, and `us-east-1` and empty as its aliases. */
const REGIONS = new Set(['auto', 'us-east-1', '']);
/** How far a signed request's time may be from ours (S3's limit). */
export const MAX_SKEW_MS = 15 * 60_000;
/** Presigned URLs live 1 second to 7 days. */
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

/** What a request's SigV4 authorization says, from its headers or its presigned query. */
export interface SignedRequest {
  accessKeyId: string;
  /** yyyymmdd of the credential scope. */
  date: string;
  region: string;
  /** `<date>/<region>/s3/aws4_request` */
  scope: string;
  /** yyyymmddThhmmssZ */
  amzDate: string;
  signedHeaders: string[];
  signature: string;
  presigned: boolean;
  /** The x-amz-content-sha256 the signature covers (UNSIGNED-PAYLOAD when a presigned URL names none). */
  payloadHash: string;
  sessionToken: string | undefined;
}

/** Parses the Authorization header or the presigned query; undefined when the request carries neither. */
export function parseSignedRequest(
  headers: IncomingHttpHeaders,
  query: URLSearchParams,
  now: number,
): SignedRequest | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) return requireSignedHost(parseHeaderAuth(authorization, headers, now));
  if (query.has('X-Amz-Algorithm') || query.has('X-Amz-Signature') || query.has('X-Amz-Credential')) {
    return requireSignedHost(parseQueryAuth(query, now));
  }
  if (query.has('Signature') && query.has('AWSAccessKeyId')) {
    throw S3Errors.invalidRequest('Signature Version 2 is not supported: sign with AWS4-HMAC-SHA256 (SigV4).');
  }
  return undefined;
}

/**
 * AWS refuses a signature that does not cover `host`: without it, a request signed for one bucket or account
 * (virtual-hosted style names them in the host) could be replayed against another.
 */
function requireSignedHost(signed: SignedRequest): SignedRequest {
  if (!signed.signedHeaders.includes('host')) {
    throw S3Errors.accessDenied('There were headers present in the request which were not signed: host');
  }
  return signed;
}

function parseHeaderAuth(authorization: string, headers: IncomingHttpHeaders, now: number): SignedRequest {
  const space = authorization.indexOf(' ');
  const algorithm = space === -1 ? authorization : authorization.slice(0, space);
  if (algorithm === 'AWS') {
    throw S3Errors.invalidRequest('Signature Version 2 is not supported: sign with AWS4-HMAC-SHA256 (SigV4).');
  }
  if (algorithm !== ALGORITHM) {
    throw S3Errors.authorizationHeaderMalformed(`Unsupported authorization type: only ${ALGORITHM} is supported.`);
  }
  const fields = new Map<string, string>();
  for (const part of authorization.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq !== -1) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  const signature = fields.get('Signature');
  if (!credential || !signedHeaders || !signature) {
    throw S3Errors.authorizationHeaderMalformed(
      'The authorization header is malformed; it must carry Credential, SignedHeaders and Signature.',
    );
  }
  const amzDate = headerValue(headers['x-amz-date']) ?? fromHttpDate(headerValue(headers.date));
  if (!amzDate) throw S3Errors.accessDenied('AWS authentication requires a valid Date or x-amz-date header');
  const time = parseAmzDate(amzDate);
  if (time === undefined) throw S3Errors.accessDenied('AWS authentication requires a valid Date or x-amz-date header');
  if (Math.abs(now - time) > MAX_SKEW_MS) throw S3Errors.requestTimeTooSkewed();
  const payloadHash = headerValue(headers['x-amz-content-sha256']);
  if (!payloadHash) throw S3Errors.invalidRequest('Missing required header for this request: x-amz-content-sha256');
  const scope = parseCredential(credential, amzDate, S3Errors.authorizationHeaderMalformed);
  return {
    ...scope,
    amzDate,
    signedHeaders: signedHeaders.split(';'),
    signature,
    presigned: false,
    payloadHash,
    sessionToken: headerValue(headers['x-amz-security-token']),
  };
}

function parseQueryAuth(query: URLSearchParams, now: number): SignedRequest {
  const malformed = S3Errors.authorizationQueryParametersError;
  if (query.get('X-Amz-Algorithm') !== ALGORITHM) {
    throw malformed(`X-Amz-Algorithm only supports "${ALGORITHM}"`);
  }
  const credential = query.get('X-Amz-Credential');
  const amzDate = query.get('X-Amz-Date');
  const expires = query.get('X-Amz-Expires');
  const signedHeaders = query.get('X-Amz-SignedHeaders');
  const signature = query.get('X-Amz-Signature');
  if (!credential || !amzDate || !expires || !signedHeaders || !signature) {
    throw malformed(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    );
  }
  const time = parseAmzDate(amzDate);
  if (time === undefined) throw malformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
  // S3's answers: not a number, negative, over a week (400); 0 is a URL that has already expired (403).
  if (!/^-?\d+$/.test(expires)) throw malformed('X-Amz-Expires should be a number');
  if (expires.startsWith('-')) throw malformed('X-Amz-Expires must be non-negative');
  if (Number(expires) > MAX_PRESIGNED_SECONDS) {
    throw malformed(
      'X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds',
    );
  }
  if (time - now > MAX_SKEW_MS) throw S3Errors.requestTimeTooSkewed();
  const expiresAt = time + Number(expires) * 1000;
  if (now >= expiresAt) throw S3Errors.expired(expires, expiresAt, now);
  const scope = parseCredential(credential, amzDate, malformed);
  return {
    ...scope,
    amzDate,
    signedHeaders: signedHeaders.split(';'),
    signature,
    presigned: true,
    payloadHash: query.get('X-Amz-Content-Sha256') ?? UNSIGNED_PAYLOAD,
    sessionToken: query.get('X-Amz-Security-Token') ?? undefined,
  };
}

function parseCredential(credential: string, amzDate: string, malformed: (message: string) => Error) {
  // The access key id itself may not contain '/', so the last four parts are the scope.
  const parts = credential.split('/');
  if (parts.length !== 5 || parts[4] !== 'aws4_request') {
    throw malformed(`The credential is malformed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`);
  }
  const [accessKeyId, date, region, service] = parts as [string, string, string, string];
  if (service !== 's3')
    throw malformed(`The credential is malformed; the service '${service}' is wrong; expecting 's3'`);
  if (!REGIONS.has(region))
    throw malformed(`The authorization header is malformed; the region '${region}' is wrong; expecting 'auto'`);
  if (date !== amzDate.slice(0, 8)) {
    throw malformed(`The credential is malformed; its date '${date}' is not the request date '${amzDate.slice(0, 8)}'`);
  }
  return { accessKeyId, date, region, scope: `${date}/${region}/s3/aws4_request` };
}

/** yyyymmddThhmmssZ to milliseconds, or undefined. */
function parseAmzDate(value: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const time = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  return Number.isNaN(time) ? undefined : time;
}

function fromHttpDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return undefined;
  return new Date(time)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** RFC 3986 unreserved characters stay; everything else is %XX of its UTF-8 bytes (AWS's UriEncode). */
export function awsEncode(text: string, keepSlash = false): string {
  // encodeURIComponent leaves !'()* alone, which AWS encodes.
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

function lenientDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The canonical query string: every parameter (but the signature) encoded, sorted by name then value. The query
 * is decoded by URLSearchParams, exactly as the operations read their parameters (`+` a space, a malformed escape
 * kept as written): two queries that read differently never share a canonical form, so no signed value can
 * change after signing.
 */
export function canonicalQuery(rawQuery: string, presigned: boolean): string {
  const pairs: [string, string][] = [];
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (presigned && name === 'X-Amz-Signature') continue;
    pairs.push([awsEncode(name), awsEncode(value)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

/** The signed headers' canonical lines, from the raw header list (repeated headers joined with ','). */
export function canonicalHeaders(rawHeaders: readonly string[], signed: readonly string[]): string {
  const wanted = new Map<string, string[]>(signed.map((name) => [name, []]));
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const values = wanted.get(rawHeaders[i]!.toLowerCase());
    if (values) values.push(rawHeaders[i + 1]!.trim().replace(/ +/g, ' '));
  }
  let out = '';
  for (const name of signed) out += `${name}:${wanted.get(name)!.join(',')}\n`;
  return out;
}

export const sha256Hex = (data: string | Uint8Array) => hash('sha256', data, 'hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * A SigV4 signing key, ready to sign: HMAC-SHA256 with the key's inner and outer pads already hashed, so a
 * signature costs two hash copies instead of a fresh HMAC (createHmac's key setup was most of a signature
 * check's CPU: ~19 us of ~53).
 */
export class SigningKey {
  readonly #inner;
  readonly #outer;

  constructor(key: Buffer) {
    const block = Buffer.alloc(64);
    key.copy(block);
    this.#inner = createHash('sha256').update(block.map((b) => b ^ 0x36));
    this.#outer = createHash('sha256').update(block.map((b) => b ^ 0x5c));
  }

  /** Hex HMAC-SHA256 of `stringToSign` under this key. */
  sign(stringToSign: string): string {
    const inner = this.#inner.copy().update(stringToSign, 'utf8').digest();
    return this.#outer.copy().update(inner).digest('hex');
  }
}

const signingKeys = new Map<string, SigningKey>();
const CACHED_KEYS = 1000;

/** HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), "s3"), "aws4_request"), cached (one per key and day). */
export function signingKey(secret: string, date: string, region: string): SigningKey {
  const cacheKey = `${secret}\n${date}\n${region}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    key = new SigningKey(hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), 's3'), 'aws4_request'));
    if (signingKeys.size >= CACHED_KEYS) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
}

export function signaturesEqual(a: string, b: string): boolean {
  if (a.length !== b.length || !/^[0-9a-f]+$/.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** The request parts the signature covers. */
export interface RequestParts {
  method: string;
  /** The path as sent (still percent-encoded). */
  rawPath: string;
  rawQuery: string;
  rawHeaders: readonly string[];
}

/**
 * Whether `signed.signature` is the signature of this request under `secret`. The canonical path is the
 * path re-encoded the AWS way (what SDKs sign); a client that signed its path exactly as sent (some encode
 * characters the SDKs leave alone) is accepted too.
 */
export function verifySignature(parts: RequestParts, signed: SignedRequest, secret: string): boolean {
  const key = signingKey(secret, signed.date, signed.region);
  const query = canonicalQuery(parts.rawQuery, signed.presigned);
  const headers = canonicalHeaders(parts.rawHeaders, signed.signedHeaders);
  const tail = `${query}\n${headers}\n${signed.signedHeaders.join(';')}\n${signed.payloadHash}`;
  const normalized = parts.rawPath
    .split('/')
    .map((segment) => awsEncode(lenientDecode(segment)))
    .join('/');
  for (const path of normalized === parts.rawPath ? [normalized] : [normalized, parts.rawPath]) {
    const canonical = `${parts.method}\n${path}\n${tail}`;
    const stringToSign = `${ALGORITHM}\n${signed.amzDate}\n${signed.scope}\n${sha256Hex(canonical)}`;
    if (signaturesEqual(key.sign(stringToSign), signed.signature)) return true;
  }
  return false;
}
