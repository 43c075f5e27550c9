import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { z } from 'zod';
import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';

/** What a session signs in with: an API token, or a global API key with its email (the API's own credentials). */
export type SessionAuth = { token: string } | { email: string; key: string };

export interface Session {
  auth: SessionAuth;
  /** Sent back by the page in `x-csrf-token` on every write; never in a cookie. */
  csrf: string;
  /** Unix ms; use moves it forward by the idle limit, never past the absolute limit. */
  expiresAt: number;
  readonly absoluteExpiresAt: number;
}

const IDLE_MS = 12 * 3600_000;
const ABSOLUTE_MS = 7 * 24 * 3600_000;
const LINK_MS = 5 * 60_000;
/** A use writes the moved idle deadline only when it moved this much: not a database write per request. */
const TOUCH_MS = 60_000;

const AuthSchema = z.union([
  z.strictObject({ token: z.string() }),
  z.strictObject({ email: z.string(), key: z.string() }),
]);

/**
 * Dashboard sessions and one-time sign-in links, in the database, so every node sharing it knows every session
 * (a sign-in on one node works on the next request the load balancer sends elsewhere) and a sign-out ends it on all.
 *
 * A row is keyed by the SHA-256 digest of the session id (the cookie) and holds the credential it signed in with,
 * sealed with AES-256-GCM under a key derived from that id: the database alone yields neither a usable cookie nor
 * the credential, only the browser that holds the cookie can open its row. Every request is authenticated anew
 * with the credential, so a revoked token ends its sessions at once. The CSRF token is an HMAC of the id, the same
 * on every node with nothing stored.
 */
export class SessionStore {
  readonly #db: SqlDatabase;
  /** Idle and absolute expiry of sessions, and of sign-in links. */
  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async create(auth: SessionAuth): Promise<{ id: string; session: Session }> {
    const id = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    const session: Session = { auth, csrf: csrfOf(id), expiresAt: now + IDLE_MS, absoluteExpiresAt: now + ABSOLUTE_MS };
    await this.#sweep(now);
    await this.#db.run(
      'INSERT INTO dashboard_sessions (id_hash, sealed, expires_at, absolute_expires_at) VALUES (?, ?, ?, ?)',
      [digest(id), seal(id, auth), session.expiresAt, session.absoluteExpiresAt],
    );
    return { id, session };
  }

  /** The live session with this id (its idle deadline moved on), or undefined. */
  async get(id: string): Promise<Session | undefined> {
    const key = digest(id);
    const row = await this.#db.get<{ sealed: string; expires_at: number; absolute_expires_at: number }>(
      'SELECT sealed, expires_at, absolute_expires_at FROM dashboard_sessions WHERE id_hash = ?',
      [key],
    );
    if (!row) return undefined;
    const now = this.#clock.now();
    const auth = open(id, row.sealed);
    if (now >= Number(row.expires_at) || !auth) {
      await this.#db.run('DELETE FROM dashboard_sessions WHERE id_hash = ?', [key]);
      return undefined;
    }
    const absoluteExpiresAt = Number(row.absolute_expires_at);
    const expiresAt = Math.min(now + IDLE_MS, absoluteExpiresAt);
    if (expiresAt - Number(row.expires_at) >= TOUCH_MS) {
      await this.#db.run('UPDATE dashboard_sessions SET expires_at = ? WHERE id_hash = ?', [expiresAt, key]);
    }
    return { auth, csrf: csrfOf(id), expiresAt, absoluteExpiresAt };
  }

  /** Ends the session on every node. */
  async delete(id: string): Promise<void> {
    await this.#db.run('DELETE FROM dashboard_sessions WHERE id_hash = ?', [digest(id)]);
  }

  /** A code for one sign-in within five minutes (`ledge dashboard`), usable on any node. */
  async createLink(auth: SessionAuth): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.#sweep(this.#clock.now());
    await this.#db.run('INSERT INTO dashboard_links (code_hash, sealed, expires_at) VALUES (?, ?, ?)', [
      digest(code),
      seal(code, auth),
      this.#clock.now() + LINK_MS,
    ]);
    return code;
  }

  /** The link's credential without using the link up (what the confirmation page shows); undefined when spent. */
  async peekLink(code: string): Promise<SessionAuth | undefined> {
    const row = await this.#db.get<{ sealed: string; expires_at: number }>(
      'SELECT sealed, expires_at FROM dashboard_links WHERE code_hash = ?',
      [digest(code)],
    );
    if (!row || this.#clock.now() >= Number(row.expires_at)) return undefined;
    return open(code, row.sealed);
  }

  /** The link's credential, once: a second use (on any node), or a use after five minutes, gets nothing. */
  async consumeLink(code: string): Promise<SessionAuth | undefined> {
    const key = digest(code);
    // The delete decides who consumes it: of two nodes racing, one deletes the row and the other finds none.
    return this.#db.transaction(async (tx) => {
      const row = await tx.get<{ sealed: string; expires_at: number }>(
        'SELECT sealed, expires_at FROM dashboard_links WHERE code_hash = ?',
        [key],
      );
      if (!row) return undefined;
      const { changes } = await tx.run('DELETE FROM dashboard_links WHERE code_hash = ?', [key]);
      if (changes !== 1 || this.#clock.now() >= Number(row.expires_at)) return undefined;
      return open(code, row.sealed);
    });
  }

  /** Expired rows go at each sign-in (indexed by expiry: a few rows each time, never a scan). */
  async #sweep(now: number): Promise<void> {
    await this.#db.run('DELETE FROM dashboard_sessions WHERE expires_at <= ?', [now]);
    await this.#db.run('DELETE FROM dashboard_links WHERE expires_at <= ?', [now]);
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

function csrfOf(id: string): string {
  return createHmac('sha256', id).update('ledge dashboard csrf').digest('base64url');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', 'ledge dashboard session', 32));
}

function seal(secret: string, auth: SessionAuth): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(auth), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** The credential sealed under this secret, or undefined when the row was not sealed with it. */
function open(secret: string, sealed: string): SessionAuth | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return AuthSchema.parse(JSON.parse(text));
  } catch {
    return undefined;
  }
}
