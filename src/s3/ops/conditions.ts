import type { IncomingHttpHeaders } from 'node:http';
import { conditionalFromHeaders, type Conditional } from '../../storage/index.ts';

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : value);

/** If-Match / If-None-Match / If-Modified-Since / If-Unmodified-Since, or their `<prefix>`-named variants. */
export function conditionalHeaders(headers: IncomingHttpHeaders, prefix = '') {
  return {
    ifMatch: one(headers[`${prefix}if-match`]),
    ifNoneMatch: one(headers[`${prefix}if-none-match`]),
    ifModifiedSince: one(headers[`${prefix}if-modified-since`]),
    ifUnmodifiedSince: one(headers[`${prefix}if-unmodified-since`]),
  };
}

export function conditionFrom(headers: IncomingHttpHeaders, prefix = ''): Conditional | undefined {
  return conditionalFromHeaders(conditionalHeaders(headers, prefix));
}

/** The "strict" half of a read's conditions (If-Match, If-Unmodified-Since): failing them is 412, the rest 304. */
export function strictConditionFrom(headers: IncomingHttpHeaders): Conditional | undefined {
  const all = conditionalHeaders(headers);
  return conditionalFromHeaders({ ifMatch: all.ifMatch, ifUnmodifiedSince: all.ifUnmodifiedSince });
}
