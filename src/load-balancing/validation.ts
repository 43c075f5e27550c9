import { isIP } from 'node:net';
import type { z } from 'zod';
import { formatIssues } from '../api-kit/body.ts';
import { isEmail } from '../accounts/index.ts';
import { LbErrors } from './errors.ts';

/** Validates with a schema; failures become 400/1002 "<field path>: <problem>: validation failed". */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw LbErrors.validation(formatIssues(result.error.issues));
}

const HOSTNAME_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** An origin address is an IPv4/IPv6 literal or a DNS hostname (RFC 1123 labels, 253 characters at most). */
export function isOriginAddress(value: string): boolean {
  if (isIP(value) !== 0) return true;
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  if (name.length === 0 || name.length > 253) return false;
  return name.split('.').every((label) => HOSTNAME_LABEL.test(label));
}

/** Pool names: letters, digits, `-` and `_`. */
export const POOL_NAME = /^[A-Za-z0-9_-]+$/;

/** Splits the legacy `notification_email` ("a@x, b@y"); returns the invalid entries. */
export function invalidEmails(list: string): string[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => !isEmail(entry));
}

/** Normalises a valid comma-separated list to "a@x,b@y" (the form stored and returned). */
export function normaliseEmailList(list: string): string {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .join(',');
}
