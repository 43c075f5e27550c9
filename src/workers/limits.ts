import { clip } from '../shared/errors.ts';
import { WorkerErrors } from './errors.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Size limits on what a script upload and the secrets API accept. Where Cloudflare documents a limit
 * (developers.cloudflare.com/workers/platform/limits, the Workers API schema) Ledge uses it.
 */
export const WORKER_LIMITS = {
  /**
   * Whole multipart upload, by default: the Worker size limit Cloudflare documented for paid plans
   * (10 MB). The server's LEDGE_SCRIPT_UPLOAD_LIMIT setting raises it up to `maxUploadBytes`. Request.formData() holds
   * what it reads in memory, so this is also what a refused upload can cost.
   */
  defaultUploadBytes: 10 * MiB,
  /** Cloudflare's current uncompressed Worker size limit (64 MiB). */
  maxUploadBytes: 64 * MiB,
  /** "Environment variable size: 5 KB": each plain_text, json and secret_text value. */
  maxVariableBytes: 5 * KiB,
  /** "Environment variables: 128/Worker" (paid plans): plain_text, json and secret_text together. */
  maxVariables: 128,
  /** Binding and secret names (Cloudflare documents none; an env key this long is a mistake). */
  maxNameLength: 255,
  /** Compatibility flags: length of each, and how many (workerd knows a few hundred in all). */
  maxFlagLength: 128,
  maxFlags: 100,
  /** Annotations: `workers/tag` is at most 25 characters, `workers/message` is cut to 100 bytes. */
  maxTagLength: 25,
  maxMessageBytes: 100,
  /** All annotations of a version or deployment, as JSON (not documented by Cloudflare). */
  maxAnnotationBytes: 5 * KiB,
} as const;

/**
 * "Number of Workers: 500" per account on paid plans (developers.cloudflare.com/workers/platform/limits);
 * the server's LEDGE_MAX_SCRIPTS_PER_ACCOUNT setting changes it. Each script runs in a workerd process of its own here, so
 * this also bounds the processes one account can make the server run.
 */
export const MAX_SCRIPTS_PER_ACCOUNT = 500;

/** A variable's value (plain_text, json, secret_text) against the 5 KB limit. */
export function checkVariableSize(what: string, name: string, bytes: number): void {
  if (bytes > WORKER_LIMITS.maxVariableBytes) {
    throw WorkerErrors.invalidScript(
      `${what} "${clip(name)}" is ${bytes} bytes: a Worker's variables and secrets are limited to ${WORKER_LIMITS.maxVariableBytes} bytes each.`,
    );
  }
}

/** Bindings that count as environment variables (text and JSON); resources (buckets, databases) do not. */
export const isVariable = (binding: { type: string }): boolean =>
  binding.type === 'plain_text' || binding.type === 'json';

export function checkVariableCount(count: number): void {
  if (count > WORKER_LIMITS.maxVariables) {
    throw WorkerErrors.invalidScript(
      `This Worker would have ${count} variables and secrets: the limit is ${WORKER_LIMITS.maxVariables}.`,
    );
  }
}

/**
 * Annotations as Cloudflare treats them: a `workers/tag` over 25 characters is refused, a
 * `workers/message` is cut to 100 bytes (on a character boundary).
 */
export function normalizeAnnotations(annotations: Record<string, unknown>): Record<string, unknown> {
  const size = Buffer.byteLength(JSON.stringify(annotations));
  if (size > WORKER_LIMITS.maxAnnotationBytes) {
    throw WorkerErrors.invalidScript(
      `annotations are ${size} bytes of JSON: the limit is ${WORKER_LIMITS.maxAnnotationBytes} bytes.`,
    );
  }
  const tag = annotations['workers/tag'];
  if (typeof tag === 'string' && tag.length > WORKER_LIMITS.maxTagLength) {
    throw WorkerErrors.invalidScript(`annotations.workers/tag is limited to ${WORKER_LIMITS.maxTagLength} characters.`);
  }
  const message = annotations['workers/message'];
  if (typeof message !== 'string' || Buffer.byteLength(message) <= WORKER_LIMITS.maxMessageBytes) return annotations;
  let cut = message.slice(0, WORKER_LIMITS.maxMessageBytes);
  while (Buffer.byteLength(cut) > WORKER_LIMITS.maxMessageBytes) cut = cut.slice(0, -1);
  return { ...annotations, 'workers/message': cut };
}
