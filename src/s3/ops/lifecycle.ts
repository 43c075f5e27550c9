import { randomBytes } from 'node:crypto';
import { LifecyclePutSchema, type LifecycleRule } from '../../storage/index.ts';
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

/** PutBucketLifecycleConfiguration: replaces the bucket's rules (prefix filters; expiration, IA transition, abort). */
export async function putLifecycle(request: S3Request): Promise<S3Reply> {
  const bucket = await request.bucket();
  const document = parseXml(await readSmallBody(request.body().stream, BODY_LIMIT));
  if (document.name !== 'LifecycleConfiguration') throw S3Errors.malformedXml();
  const rules = childrenNamed(document, 'Rule').map(parseRule);
  const parsed = LifecyclePutSchema.safeParse({ rules });
  if (!parsed.success) throw S3Errors.malformedXml();
  await request.storage.lifecycle.put(request.accountId, bucket.name, parsed.data.rules ?? []);
  return emptyReply(200);
}

function parseRule(rule: XmlElement): LifecycleRule {
  const status = childText(rule, 'Status')?.trim();
  if (status !== 'Enabled' && status !== 'Disabled') throw S3Errors.malformedXml();
  const filter = child(rule, 'Filter');
  if (
    filter &&
    (child(filter, 'Tag') ||
      child(filter, 'And') ||
      child(filter, 'ObjectSizeGreaterThan') ||
      child(filter, 'ObjectSizeLessThan'))
  ) {
    throw S3Errors.notImplemented('Lifecycle filters other than Prefix');
  }
  if (child(rule, 'NoncurrentVersionExpiration') || child(rule, 'NoncurrentVersionTransition')) {
    throw S3Errors.notImplemented('Object versioning');
  }
  const prefix = (filter ? childText(filter, 'Prefix') : childText(rule, 'Prefix')) ?? '';
  const expiration = child(rule, 'Expiration');
  const abort = child(rule, 'AbortIncompleteMultipartUpload');
  const out: LifecycleRule = {
    id: childText(rule, 'ID')?.trim() || randomBytes(8).toString('hex'),
    enabled: status === 'Enabled',
    conditions: { prefix },
  };
  if (expiration) {
    if (child(expiration, 'ExpiredObjectDeleteMarker')) throw S3Errors.notImplemented('Object versioning');
    out.deleteObjectsTransition = { condition: condition(expiration) };
  }
  const transitions = childrenNamed(rule, 'Transition');
  if (transitions.length > 0) {
    out.storageClassTransitions = transitions.map((t) => {
      if (childText(t, 'StorageClass')?.trim() !== 'STANDARD_IA') throw S3Errors.invalidStorageClass();
      return { condition: condition(t), storageClass: 'InfrequentAccess' as const };
    });
  }
  if (abort) {
    const daysText = childText(abort, 'DaysAfterInitiation')?.trim() ?? '';
    if (!/^\d+$/.test(daysText)) throw S3Errors.malformedXml();
    out.abortMultipartUploadsTransition = { condition: { type: 'Age', maxAge: Number(daysText) * DAY_SECONDS } };
  }
  return out;
}

function condition(element: XmlElement): { type: 'Age'; maxAge: number } | { type: 'Date'; date: string } {
  const daysText = childText(element, 'Days')?.trim();
  const date = childText(element, 'Date')?.trim();
  if (daysText !== undefined && /^\d+$/.test(daysText)) return { type: 'Age', maxAge: Number(daysText) * DAY_SECONDS };
  if (date !== undefined && !Number.isNaN(Date.parse(date)))
    return { type: 'Date', date: new Date(date).toISOString() };
  throw S3Errors.malformedXml();
}
