import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a session signs in with: an API token, or a global API key with its email (the API's own credentials). */
export type SessionAuth = { token: string } | { email: string; key: string };

export interface Session {
  auth: SessionAuth;
  /** Sent back by the page in `x-csrf-token` on every write; never in a cookie. */
  csrf: string;
  /** Unix ms; every use moves it forward by the idle limit, never past the absolute limit. */
  expiresAt: number;
  readonly absoluteExpiresAt: number;
}

const IDLE_MS = 12 * 3600_000;
const ABSOLUTE_MS = 7 * 24 * 3600_000;
const LINK_MS = 5 * 60_000;
/** Bounds memory: past this many live sessions the oldest is dropped (it signs in again). */
const MAX_SESSIONS = 10_000;
const MAX_LINKS = 1_000;

/**
 * Dashboard sessions and one-time sign-in links, in this process's memory. A session holds the credential it
 * signed in with, so every request is authenticated anew (a revoked token ends its sessions at once). Session
 * ids and link codes are kept only as SHA-256 digests, like the API's keys; a restart signs everyone out.
 */
export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #links = new Map<string, { auth: SessionAuth; expiresAt: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  create(auth: SessionAuth): { id: string; session: Session } {
    this.#sweep();
    const id = randomBytes(32).toString('base64url');
    const now = this.#now();
    const session: Session = {
      auth,
      csrf: randomBytes(32).toString('base64url'),
      expiresAt: now + IDLE_MS,
      absoluteExpiresAt: now + ABSOLUTE_MS,
    };
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#sessions.set(digest(id), session);
    return { id, session };
  }

  /** The live session with this id (its idle deadline moved on), or undefined. */
  get(id: string): Session | undefined {
    const key = digest(id);
    const session = this.#sessions.get(key);
    if (!session) return undefined;
    const now = this.#now();
    if (now >= session.expiresAt) {
      this.#sessions.delete(key);
      return undefined;
    }
    session.expiresAt = Math.min(now + IDLE_MS, session.absoluteExpiresAt);
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(digest(id));
  }

  /** A code for one sign-in within five minutes (`ledge dashboard`). */
  createLink(auth: SessionAuth): string {
    this.#sweep();
    const code = randomBytes(32).toString('base64url');
    if (this.#links.size >= MAX_LINKS) this.#links.delete(this.#links.keys().next().value!);
    this.#links.set(digest(code), { auth, expiresAt: this.#now() + LINK_MS });
    return code;
  }

  /** The link's credential, once: a second use, or a use after five minutes, gets nothing. */
  consumeLink(code: string): SessionAuth | undefined {
    const key = digest(code);
    const link = this.#links.get(key);
    this.#links.delete(key);
    return link && this.#now() < link.expiresAt ? link.auth : undefined;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, session] of this.#sessions) if (now >= session.expiresAt) this.#sessions.delete(key);
    for (const [key, link] of this.#links) if (now >= link.expiresAt) this.#links.delete(key);
  }
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}
