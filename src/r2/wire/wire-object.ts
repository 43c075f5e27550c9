import type { ObjectRecord, ResolvedRange } from '../../storage/index.ts';

const CHECKSUM_FIELDS = { md5: '0', sha1: '1', sha256: '2', sha384: '3', sha512: '4' } as const;

/**
 * An object in the binding's JSON shape (R2HeadResponse). 64-bit numbers go out as strings, as the
 * capnp JSON codec on workerd's side expects them. List results leave out what was not `include`d.
 */
export function wireObject(
  object: ObjectRecord,
  options: { range?: ResolvedRange | undefined; http?: boolean; custom?: boolean; checksums?: boolean } = {},
): Record<string, unknown> {
  const { http = true, custom = true, checksums = true } = options;
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
  }
  if (custom) json['customFields'] = Object.entries(object.customMetadata).map(([k, v]) => ({ k, v }));
  if (options.range) json['range'] = { offset: String(options.range.offset), length: String(options.range.length) };
  if (checksums) {
    const rendered: Record<string, string> = {};
    for (const [algorithm, field] of Object.entries(CHECKSUM_FIELDS)) {
      const value = object.checksums[algorithm as keyof typeof CHECKSUM_FIELDS];
      if (value !== undefined) rendered[field] = value;
    }
    json['checksums'] = rendered;
  }
  return json;
}
