import { isReservedMetadataKey, type ObjectRecord, type ResolvedRange } from '../../storage/index.ts';

const CHECKSUM_FIELDS = { md5: '0', sha1: '1', sha256: '2', sha384: '3', sha512: '4' } as const;

/**
 * An object in the binding's JSON shape (R2HeadResponse). 64-bit numbers go out as strings, as the
 * capnp JSON codec on workerd's side expects them. List results send empty metadata for what was not
 * `include`d: workerd leaves a field it does not receive undefined, R2 gives an empty object.
 */
export function wireObject(
  object: ObjectRecord,
  options: { range?: ResolvedRange | undefined; http?: boolean; custom?: boolean } = {},
): Record<string, unknown> {
  const { http = true, custom = true } = options;
  const json: Record<string, unknown> = {
    name: object.key,
    version: object.version,
    size: String(object.size),
    etag: object.etag,
    uploaded: String(object.uploaded),
    storageClass: object.storageClass,
  };
  if (http) {
    const { cacheExpiry, ...text } = object.httpMetadata;
    json['httpFields'] = cacheExpiry === undefined ? text : { ...text, cacheExpiry: String(cacheExpiry) };
  } else json['httpFields'] = {};
  // Reserved keys are refused on every write; one stored before that rule is never shown to a binding,
  // where the runtime would take it for its own local-read entry (see R2WireBackend.localReads).
  json['customFields'] = custom
    ? Object.entries(object.customMetadata)
        .filter(([k]) => !isReservedMetadataKey(k))
        .map(([k, v]) => ({ k, v }))
    : [];
  if (options.range) json['range'] = { offset: String(options.range.offset), length: String(options.range.length) };
  const checksums: Record<string, string> = {};
  for (const [algorithm, field] of Object.entries(CHECKSUM_FIELDS)) {
    const value = object.checksums[algorithm as keyof typeof CHECKSUM_FIELDS];
    if (value !== undefined) checksums[field] = value;
  }
  json['checksums'] = checksums;
  // R2SSECResponse: the binding's `ssecKeyMd5` (base64, as the S3 door's x-amz-...-key-MD5).
  if (object.ssec) json['ssec'] = { algorithm: object.ssec.algorithm, keyMd5: object.ssec.keyMd5 };
  return json;
}
