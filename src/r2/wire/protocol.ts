import { z } from 'zod';
import {
  ssecKeyFromHex,
  type Checksums,
  type Conditional,
  type CustomMetadata,
  type HttpMetadata,
  type RangeRequest,
  type SsecKey,
} from '../../storage/index.ts';

/**
 * The JSON requests workerd's R2 binding sends (reference r2.md §2; workerd's r2-api.capnp). 64-bit
 * integers arrive as strings; fields at their defaults are omitted; unknown fields are ignored so a
 * newer workerd does not break us.
 */
const u64 = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform(Number);

const EtagSchema = z.object({ type: z.enum(['strong', 'weak', 'wildcard']), value: z.string().optional() });

const ConditionalSchema = z.object({
  etagMatches: z.array(EtagSchema).optional(),
  etagDoesNotMatch: z.array(EtagSchema).optional(),
  uploadedBefore: u64.optional(),
  uploadedAfter: u64.optional(),
  secondsGranularity: z.boolean().optional(),
});

const HttpFieldsSchema = z.object({
  contentType: z.string().optional(),
  contentLanguage: z.string().optional(),
  contentDisposition: z.string().optional(),
  contentEncoding: z.string().optional(),
  cacheControl: z.string().optional(),
  cacheExpiry: u64.optional(),
});

const RecordsSchema = z.array(z.object({ k: z.string(), v: z.string() }));
/** SSE-C (R2SSECOptions): the customer key as 64 hex digits, which workerd checks before sending it. */
const SsecSchema = z.object({ key: z.string() }).optional();
const key = z.string();

export const WireRequestSchema = z.discriminatedUnion('method', [
  z.object({ method: z.literal('head'), object: key }),
  z.object({
    method: z.literal('get'),
    object: key,
    range: z.object({ offset: u64.optional(), length: u64.optional(), suffix: u64.optional() }).optional(),
    rangeHeader: z.string().optional(),
    onlyIf: ConditionalSchema.optional(),
    ssec: SsecSchema,
  }),
  z.object({
    method: z.literal('put'),
    object: key,
    customFields: RecordsSchema.optional(),
    httpFields: HttpFieldsSchema.optional(),
    onlyIf: ConditionalSchema.optional(),
    md5: z.string().optional(),
    sha1: z.string().optional(),
    sha256: z.string().optional(),
    sha384: z.string().optional(),
    sha512: z.string().optional(),
    storageClass: z.string().optional(),
    ssec: SsecSchema,
  }),
  z.object({
    method: z.literal('list'),
    limit: z.number().int().optional(),
    prefix: z.string().optional(),
    cursor: z.string().optional(),
    delimiter: z.string().optional(),
    startAfter: z.string().optional(),
    include: z.array(z.number().int()).optional(),
    newRuntime: z.boolean().optional(),
  }),
  z.object({ method: z.literal('delete'), object: key.optional(), objects: z.array(key).optional() }),
  z.object({
    method: z.literal('createMultipartUpload'),
    object: key,
    customFields: RecordsSchema.optional(),
    httpFields: HttpFieldsSchema.optional(),
    storageClass: z.string().optional(),
    ssec: SsecSchema,
  }),
  z.object({
    method: z.literal('uploadPart'),
    object: key,
    uploadId: z.string(),
    partNumber: z.number().int(),
    ssec: SsecSchema,
  }),
  z.object({
    method: z.literal('completeMultipartUpload'),
    object: key,
    uploadId: z.string(),
    parts: z.array(z.object({ etag: z.string(), part: z.number().int() })),
  }),
  z.object({ method: z.literal('abortMultipartUpload'), object: key, uploadId: z.string() }),
]);

export type WireRequest = z.infer<typeof WireRequestSchema>;

/** The customer key of a request that carries one (`ssec.key`, hex). */
export function toSsec(request: { ssec?: { key: string } | undefined }): SsecKey | undefined {
  return request.ssec ? ssecKeyFromHex(request.ssec.key) : undefined;
}
export type WireMethod = WireRequest['method'];

export function toHttpMetadata(fields: z.infer<typeof HttpFieldsSchema> | undefined): HttpMetadata {
  const metadata: HttpMetadata = {};
  if (!fields) return metadata;
  for (const name of [
    'contentType',
    'contentLanguage',
    'contentDisposition',
    'contentEncoding',
    'cacheControl',
  ] as const) {
    const value = fields[name];
    if (value !== undefined) metadata[name] = value;
  }
  if (fields.cacheExpiry !== undefined) metadata.cacheExpiry = fields.cacheExpiry;
  return metadata;
}

export function toCustomMetadata(records: { k: string; v: string }[] | undefined): CustomMetadata {
  const metadata: CustomMetadata = {};
  for (const { k, v } of records ?? []) metadata[k] = v;
  return metadata;
}

export function toConditional(onlyIf: z.infer<typeof ConditionalSchema> | undefined): Conditional | undefined {
  if (!onlyIf) return undefined;
  const condition: Conditional = {};
  if (onlyIf.etagMatches && onlyIf.etagMatches.length > 0) condition.etagMatches = onlyIf.etagMatches;
  if (onlyIf.etagDoesNotMatch && onlyIf.etagDoesNotMatch.length > 0)
    condition.etagDoesNotMatch = onlyIf.etagDoesNotMatch;
  if (onlyIf.uploadedBefore !== undefined) condition.uploadedBefore = onlyIf.uploadedBefore;
  if (onlyIf.uploadedAfter !== undefined) condition.uploadedAfter = onlyIf.uploadedAfter;
  if (onlyIf.secondsGranularity) condition.secondsGranularity = true;
  return Object.keys(condition).length > 0 ? condition : undefined;
}

export function toRange(request: Extract<WireRequest, { method: 'get' }>): RangeRequest | undefined {
  if (request.range) return request.range;
  if (request.rangeHeader !== undefined) return { header: request.rangeHeader };
  return undefined;
}

/** md5 arrives base64, the SHA digests hex; the engine compares hex. */
export function toDigests(request: Extract<WireRequest, { method: 'put' }>): Checksums {
  const digests: Checksums = {};
  if (request.md5 !== undefined) digests.md5 = Buffer.from(request.md5, 'base64').toString('hex');
  for (const name of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
    const value = request[name];
    if (value !== undefined) digests[name] = value;
  }
  return digests;
}
