import { randomBytes } from 'node:crypto';
import { isMidnightUtc, LifecyclePutSchema, type LifecycleRule } from '../../storage/index.ts';
import { emptyReply, xmlReply, type S3Reply, type S3Request } from '../context.ts';
import { S3Errors } from '../errors.ts';
import {
  child,
  childrenNamed,
  childText,
  parseXml,
  readSmallBody,
  renderXml,
  type XmlElement,
  type XmlNode,
} from '../xml.ts';

const DAY_SECONDS = 86_400;
const BODY_LIMIT = 1024 * 1024;
const MAX_ID_LENGTH = 255;
/** A date, or a date and time with its zone (a time without one would be read in the server's zone). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/;
/** Filter predicates S3 has and R2 does not. */
const UNOFFERED_PREDICATES = ['Tag', 'ObjectSizeGreaterThan', 'ObjectSizeLessThan'];

/**
 * GetBucketLifecycleConfiguration: the bucket's lifecycle rules (the same ones /client/v4 .../lifecycle and
 * wrangler manage) in S3's shape; NoSuchLifecycleConfiguration when there are none.
 */
export async function getLifecycle(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  const rules = await request.storage.lifecycle.get(request.accountId, bucket.name);
  if (rules.length === 0) throw S3Errors.noSuchLifecycle();
  return xmlReply(renderXml('LifecycleConfiguration', { Rule: rules.map(renderRule) }));
}

function renderRule(rule: LifecycleRule): XmlNode {
  const expire = rule.deleteObjectsTransition?.condition;
  const abort = rule.abortMultipartUploadsTransition?.condition;
  return {
    ID: rule.id,
    Filter: { Prefix: rule.conditions?.prefix ?? '' },
    Status: rule.enabled ? 'Enabled' : 'Disabled',
    Expiration: expire ? when(expire) : undefined,
    Transition: (rule.storageClassTransitions ?? []).map((t) => ({
      ...when(t.condition),
      StorageClass: 'STANDARD_IA',
    })),
    AbortIncompleteMultipartUpload: abort ? { DaysAfterInitiation: days(abort.maxAge) } : undefined,
  };
}

function when(condition: { type: 'Age'; maxAge: number } | { type: 'Date'; date: string }): XmlNode {
  return condition.type === 'Age' ? { Days: days(condition.maxAge) } : { Date: new Date(condition.date).toISOString() };
}

/** Ages are kept in seconds (the v4 API's unit); S3 speaks whole days. */
const days = (seconds: number) => Math.max(1, Math.ceil(seconds / DAY_SECONDS));

/**
 * PutBucketLifecycleConfiguration: replaces the bucket's rules (prefix filters, also under `And`;
 * expiration, IA transition, abort), validated as S3 validates them, with S3's codes and messages.
 */
export async function putLifecycle(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  const document = parseXml(await readSmallBody(request.body().stream, BODY_LIMIT));
  if (document.name !== 'LifecycleConfiguration') throw S3Errors.malformedXml();
  const rules = childrenNamed(document, 'Rule').map(parseRule);
  const ids = new Set<string>();
  for (const rule of rules) {
    if (ids.has(rule.id)) {
      throw S3Errors.invalidArgument('Rule ID must be unique. Found same ID for more than one rule');
    }
    ids.add(rule.id);
  }
  const parsed = LifecyclePutSchema.safeParse({ rules });
  if (!parsed.success) throw S3Errors.malformedXml();
  await request.storage.lifecycle.put(request.accountId, bucket.name, parsed.data.rules ?? []);
  return emptyReply(200);
}

function parseRule(rule: XmlElement): LifecycleRule {
  const status = childText(rule, 'Status')?.trim();
  if (status !== 'Enabled' && status !== 'Disabled') throw S3Errors.malformedXml();
  if (child(rule, 'NoncurrentVersionExpiration') || child(rule, 'NoncurrentVersionTransition')) {
    throw S3Errors.notImplemented('Object versioning');
  }
  const id = childText(rule, 'ID')?.trim() || randomBytes(8).toString('hex');
  if (id.length > MAX_ID_LENGTH) {
    throw S3Errors.invalidArgument(`ID length should not exceed allowed limit of ${MAX_ID_LENGTH}`);
  }
  const expiration = child(rule, 'Expiration');
  const abort = child(rule, 'AbortIncompleteMultipartUpload');
  const out: LifecycleRule = { id, enabled: status === 'Enabled', conditions: { prefix: prefixOf(rule) } };
  if (expiration) {
    if (child(expiration, 'ExpiredObjectDeleteMarker')) throw S3Errors.notImplemented('Object versioning');
    out.deleteObjectsTransition = { condition: condition(expiration, 'Expiration', 1) };
  }
  const transitions = childrenNamed(rule, 'Transition');
  if (transitions.length > 0) {
    out.storageClassTransitions = transitions.map((t) => {
      if (childText(t, 'StorageClass')?.trim() !== 'STANDARD_IA') throw S3Errors.invalidStorageClass();
      return { condition: condition(t, 'Transition', 0), storageClass: 'InfrequentAccess' as const };
    });
  }
  if (abort) {
    const daysText = childText(abort, 'DaysAfterInitiation')?.trim() ?? '';
    if (!/^-?\d+$/.test(daysText)) throw S3Errors.malformedXml();
    if (Number(daysText) < 1) {
      throw S3Errors.invalidArgument(
        "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer",
      );
    }
    out.abortMultipartUploadsTransition = { condition: { type: 'Age', maxAge: Number(daysText) * DAY_SECONDS } };
  }
  return out;
}

/**
 * The rule's prefix: the old rule-level `<Prefix>`, or `<Filter>` with one predicate (`Prefix`, or `And` of
 * several). Both at once, or two predicates outside `And`, is MalformedXML as on S3; tag and size predicates
 * are valid S3 that R2 does not offer (it filters on prefixes only), so they are NotImplemented.
 */
function prefixOf(rule: XmlElement): string {
  const filter = child(rule, 'Filter');
  const rulePrefix = childText(rule, 'Prefix');
  if (!filter) return rulePrefix ?? '';
  if (rulePrefix !== undefined) throw S3Errors.malformedXml();
  if (filter.children.length > 1) throw S3Errors.malformedXml();
  const predicate = filter.children[0];
  if (predicate === undefined) return '';
  if (predicate.name === 'Prefix') return predicate.text;
  if (predicate.name !== 'And') return refusePredicate(predicate.name);
  let prefix: string | undefined;
  for (const part of predicate.children) {
    if (part.name !== 'Prefix') refusePredicate(part.name);
    if (prefix !== undefined) throw S3Errors.malformedXml();
    prefix = part.text;
  }
  return prefix ?? '';
}

function refusePredicate(name: string): never {
  if (UNOFFERED_PREDICATES.includes(name)) {
    throw S3Errors.notImplemented(`Lifecycle filters on ${name} (R2 filters on prefixes only)`);
  }
  throw S3Errors.malformedXml();
}

/**
 * `Days` or `Date` (exactly one). Days must be whole, positive for an expiration; a date ISO 8601 at midnight
 * UTC (S3's "'Date' must be at midnight GMT").
 */
function condition(
  element: XmlElement,
  action: 'Expiration' | 'Transition',
  minDays: number,
): { type: 'Age'; maxAge: number } | { type: 'Date'; date: string } {
  const daysText = childText(element, 'Days')?.trim();
  const date = childText(element, 'Date')?.trim();
  if ((daysText === undefined) === (date === undefined)) throw S3Errors.malformedXml();
  if (daysText !== undefined) {
    if (!/^-?\d+$/.test(daysText)) throw S3Errors.malformedXml();
    if (Number(daysText) < minDays) {
      throw S3Errors.invalidArgument(
        minDays > 0
          ? `'Days' for ${action} action must be a positive integer`
          : `'Days' for ${action} action must be a non-negative integer`,
      );
    }
    return { type: 'Age', maxAge: Number(daysText) * DAY_SECONDS };
  }
  if (!isCalendarDate(date!)) throw S3Errors.malformedXml();
  if (!isMidnightUtc(date!)) throw S3Errors.invalidArgument("'Date' must be at midnight GMT");
  return { type: 'Date', date: new Date(date!).toISOString() };
}

/** An ISO 8601 date whose day exists (V8 reads 2030-02-30 as March 2nd; S3 refuses it). */
function isCalendarDate(date: string): boolean {
  if (!ISO_DATE.test(date) || Number.isNaN(Date.parse(date))) return false;
  const [year, month, day] = date.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  return calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day;
}
