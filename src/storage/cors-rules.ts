import { z } from 'zod';
import { R2Errors } from './errors.ts';

/** S3 (and so R2's S3 PutBucketCors) accepts at most this many rules per bucket. */
export const MAX_CORS_RULES = 100;
/** R2 documents 86400 s as the largest preflight cache age a rule may ask for. */
export const MAX_CORS_AGE_SECONDS = 86_400;

export const CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;
export type CorsMethod = (typeof CORS_METHODS)[number];

/** An HTTP header name (RFC 9110 token) or a pattern with `*` wildcards. */
const HEADER_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

/**
 * One rule as the /cors API, wrangler and the SDK send it (R2's JSON shape). The S3 endpoint's
 * PutBucketCors turns its XML (AllowedOrigin, AllowedMethod, AllowedHeader, ExposeHeader, MaxAgeSeconds,
 * ID) into the same shape, so one store and one matcher serve both.
 */
export const CorsRuleSchema = z.object({
  id: z.string().min(1).max(255).optional(),
  allowed: z.object({
    methods: z.array(z.enum(CORS_METHODS)).min(1).max(CORS_METHODS.length),
    origins: z.array(z.string().min(1).max(2048)).min(1).max(100),
    headers: z.array(z.string()).max(100).optional(),
  }),
  exposeHeaders: z.array(z.string()).max(100).optional(),
  maxAgeSeconds: z.number().int().min(0).max(MAX_CORS_AGE_SECONDS).optional(),
});

export const CorsPutSchema = z.object({ rules: z.array(CorsRuleSchema).max(MAX_CORS_RULES).optional() });

export type CorsRule = z.infer<typeof CorsRuleSchema>;

/**
 * Checks what the schema cannot, as R2 refuses it: an origin must be `*` or an Origin header value
 * (`scheme://host[:port]`, no path, at most one `*` wildcard), header names must be tokens (or
 * patterns with at most one `*`, as S3), and methods may not repeat.
 */
export function assertCorsRules(rules: readonly CorsRule[]): void {
  rules.forEach((rule, index) => {
    const where = rule.id === undefined ? `rules[${index}]` : `rule "${rule.id}"`;
    for (const origin of rule.allowed.origins) {
      const problem = originProblem(origin);
      if (problem) throw R2Errors.invalidArgument(`${where}: allowed origin "${origin}" ${problem}`);
    }
    if (new Set(rule.allowed.methods).size !== rule.allowed.methods.length)
      throw R2Errors.invalidArgument(`${where}: allowed methods repeat`);
    for (const header of rule.allowed.headers ?? []) {
      if (!HEADER_PATTERN.test(header))
        throw R2Errors.invalidArgument(`${where}: allowed header "${header}" is not a header name`);
      if (header.split('*').length > 2)
        throw R2Errors.invalidArgument(`${where}: allowed header "${header}" may hold at most one * wildcard`);
    }
    for (const header of rule.exposeHeaders ?? []) {
      if (!HEADER_PATTERN.test(header))
        throw R2Errors.invalidArgument(`${where}: expose header "${header}" is not a header name`);
    }
  });
}

function originProblem(origin: string): string | undefined {
  if (origin === '*') return undefined;
  if ((origin.match(/\*/g)?.length ?? 0) > 1) return 'may hold at most one * wildcard';
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\s]+)$/i.exec(origin);
  if (!match) {
    return /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+[/?#]/i.test(origin)
      ? 'must not have a path: an origin is scheme://host[:port]'
      : 'is not an origin: use scheme://host[:port] or *';
  }
  const authority = match[2] ?? '';
  if (authority.includes('@')) return 'must not carry user information';
  const port = /:(\d*)$/.exec(authority)?.[1];
  if (port !== undefined && !(port.length > 0 && Number(port) <= 65535)) return 'has an invalid port';
  return undefined;
}
