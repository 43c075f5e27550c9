import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CORS_METHODS,
  corsActual,
  corsPreflight,
  CorsPutSchema,
  isPreflight,
  type CorsRule,
  type StorageService,
} from '../../storage/index.ts';
import { addressOf } from '../address.ts';
import { emptyReply, xmlReply, type S3Reply, type S3Request } from '../context.ts';
import type { S3CredentialSource } from '../credentials.ts';
import { S3Error, S3Errors } from '../errors.ts';
import { childrenNamed, childText, parseXml, readSmallBody, renderXml, type XmlElement } from '../xml.ts';

const BODY_LIMIT = 256 * 1024;

/** GetBucketCors: the rules /client/v4 .../cors manages, in S3's XML. */
export async function getCors(request: S3Request): Promise<S3Reply> {
  const rules = await request.storage.cors.get(request.accountId, request.bucketName!);
  if (!rules) {
    throw new S3Error(404, 'NoSuchCORSConfiguration', 'The CORS configuration does not exist');
  }
  return xmlReply(
    renderXml('CORSConfiguration', {
      CORSRule: rules.map((rule) => ({
        ID: rule.id,
        AllowedOrigin: rule.allowed.origins,
        AllowedMethod: rule.allowed.methods,
        AllowedHeader: rule.allowed.headers ?? [],
        ExposeHeader: rule.exposeHeaders ?? [],
        MaxAgeSeconds: rule.maxAgeSeconds,
      })),
    }),
  );
}

/** PutBucketCors: replaces the rules (the same store and checks as the /cors route). */
export async function putCors(request: S3Request): Promise<S3Reply> {
  const document = parseXml(await readSmallBody(request.body().stream, BODY_LIMIT));
  if (document.name !== 'CORSConfiguration') throw S3Errors.malformedXml();
  const rules = childrenNamed(document, 'CORSRule').map(parseRule);
  for (const rule of rules) refuseAsS3(rule);
  const parsed = CorsPutSchema.safeParse({ rules });
  if (!parsed.success) throw S3Errors.malformedXml();
  await request.storage.cors.put(request.accountId, request.bucketName!, parsed.data.rules ?? []);
  return emptyReply(200);
}

/** What S3 refuses with its own code and words (InvalidRequest), before the checks both doors share. */
function refuseAsS3(rule: ParsedRule): void {
  for (const method of rule.allowed.methods) {
    if (!(CORS_METHODS as readonly string[]).includes(method)) {
      throw S3Errors.invalidRequest(`Found unsupported HTTP method in CORS config. Unsupported method is ${method}`);
    }
  }
  for (const origin of rule.allowed.origins) {
    if (wildcards(origin) > 1) {
      throw S3Errors.invalidRequest(`AllowedOrigin "${origin}" can not have more than one wildcard.`);
    }
  }
  for (const header of rule.allowed.headers ?? []) {
    if (wildcards(header) > 1) {
      throw S3Errors.invalidRequest(`AllowedHeader "${header}" can not have more than one wildcard.`);
    }
  }
}

const wildcards = (text: string) => text.split('*').length - 1;

interface ParsedRule {
  allowed: { origins: string[]; methods: string[]; headers?: string[] };
}

function parseRule(rule: XmlElement): ParsedRule {
  const texts = (name: string) => childrenNamed(rule, name).map((e) => e.text.trim());
  const maxAge = childText(rule, 'MaxAgeSeconds')?.trim();
  const headers = texts('AllowedHeader');
  const expose = texts('ExposeHeader');
  return {
    ...(childText(rule, 'ID') ? { id: childText(rule, 'ID')!.trim() } : {}),
    allowed: {
      origins: texts('AllowedOrigin'),
      methods: texts('AllowedMethod'),
      ...(headers.length ? { headers } : {}),
    },
    ...(expose.length ? { exposeHeaders: expose } : {}),
    ...(maxAge !== undefined ? { maxAgeSeconds: /^\d+$/.test(maxAge) ? Number(maxAge) : Number.NaN } : {}),
  };
}

export async function deleteCors(request: S3Request): Promise<S3Reply> {
  await request.storage.cors.delete(request.accountId, request.bucketName!);
  return emptyReply(204);
}

/**
 * Answers a CORS preflight (OPTIONS, unsigned as browsers send it) from the bucket's rules. The account
 * comes from the host, or on a bare address from the access key a presigned URL names (X-Amz-Credential:
 * the preflight goes to the same URL).
 */
export async function answerPreflight(
  req: IncomingMessage,
  res: ServerResponse,
  deps: { storage: StorageService; credentials: S3CredentialSource },
): Promise<boolean> {
  const origin = req.headers.origin;
  const method = req.headers['access-control-request-method'];
  if (!isPreflight(req.method ?? '', origin, method)) return false;
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const address = addressOf(req.headers.host, mark === -1 ? url : url.slice(0, mark));
  let accountId = address.accountId;
  if (accountId === undefined) {
    const credential = new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1)).get('X-Amz-Credential');
    const key = credential
      ? await deps.credentials.lookup(credential.split('/')[0] ?? '', undefined).catch(() => undefined)
      : undefined;
    const accounts = key ? [...key.principal.accountIds] : [];
    if (accounts.length === 1) accountId = accounts[0];
  }
  const bucket =
    accountId !== undefined && address.bucket !== undefined
      ? await deps.storage.getBucket(accountId, address.bucket)
      : undefined;
  const rules: CorsRule[] | undefined = bucket ? await deps.storage.cors.rulesOf(bucket) : undefined;
  const answer = corsPreflight(rules, {
    origin: origin!,
    method: method!,
    requestHeaders: req.headers['access-control-request-headers'],
  });
  if (answer.allowed) {
    res.writeHead(200, { ...answer.headers, 'content-length': '0' }).end();
  } else {
    const xml = renderXml(
      'Error',
      { Code: 'AccessForbidden', Message: 'CORSResponse: This CORS request is not allowed.' },
      '',
    );
    res
      .writeHead(403, {
        ...answer.headers,
        'content-type': 'application/xml',
        'content-length': String(Buffer.byteLength(xml)),
      })
      .end(xml);
  }
  return true;
}

/** The CORS headers of an actual request from a browser (one with Origin) to a bucket with rules. */
export async function corsHeadersFor(request: S3Request): Promise<Record<string, string>> {
  const origin = request.req.headers.origin;
  if (origin === undefined || request.bucketName === undefined) return {};
  const bucket = await request.storage.getBucket(request.accountId, request.bucketName);
  if (!bucket) return {};
  return corsActual(await request.storage.cors.rulesOf(bucket), { origin, method: request.method });
}
