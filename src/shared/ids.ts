import { randomBytes, randomUUID } from 'node:crypto';

/** A Cloudflare-style identifier: 32 lowercase hex characters. */
export function newId(): string {
  return randomBytes(16).toString('hex');
}

export function isId(value: string): boolean {
  return /^[0-9a-f]{32}$/.test(value);
}

/** A random secret of `bytes` bytes rendered URL-safe (API tokens, per-boot internal secrets). */
export function newSecret(bytes = 30): string {
  return randomBytes(bytes).toString('base64url');
}

/** A global API key in Cloudflare's shape: 37 lowercase hex characters. */
export function newGlobalApiKey(): string {
  return randomBytes(19).toString('hex').slice(0, 37);
}

export function newRequestId(): string {
  return randomUUID();
}
