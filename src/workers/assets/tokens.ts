import { createHmac, timingSafeEqual } from 'node:crypto';
import { LedgeError } from '../../shared/errors.ts';

/**
 * The tokens of an upload session, as JWTs (HS256, signed with a key derived from the installation's secret
 * key: every node verifies what another signed). wrangler reads their payload (`exp`), so they must be JWTs.
 * `upload`: lets its holder send the session's files, without an API token, as on Cloudflare.
 * `complete`: names a session whose files all arrived; a script upload attaches them with it.
 */
export interface AssetTokenClaims {
  /** The session id. */
  sub: string;
  /** The account the session belongs to. */
  aid: string;
  use: 'upload' | 'complete';
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

export const AssetTokenErrors = {
  invalid: () => new LedgeError(401, 10000, 'Authentication error: the assets upload token is not valid.'),
  expired: () =>
    new LedgeError(
      401,
      10000,
      'Authentication error: the assets upload token has expired; deploy again to start a new session.',
    ),
  wrongUse: (use: string) =>
    new LedgeError(400, 10021, `The assets token is not a${use === 'upload' ? 'n upload' : ' completion'} token.`),
};

export class AssetTokens {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  sign(claims: AssetTokenClaims): string {
    const payload = base64url(JSON.stringify(claims));
    return `${HEADER}.${payload}.${this.#signature(`${HEADER}.${payload}`)}`;
  }

  /** The claims of a token this installation signed for `use`, unexpired at `nowSeconds`; throws otherwise. */
  verify(token: string, use: AssetTokenClaims['use'], nowSeconds: number): AssetTokenClaims {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== HEADER) throw AssetTokenErrors.invalid();
    const expected = Buffer.from(this.#signature(`${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw AssetTokenErrors.invalid();
    let claims: AssetTokenClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as AssetTokenClaims;
    } catch {
      throw AssetTokenErrors.invalid();
    }
    if (claims.use !== use) throw AssetTokenErrors.wrongUse(use);
    if (!(claims.exp > nowSeconds)) throw AssetTokenErrors.expired();
    return claims;
  }

  #signature(input: string): string {
    return createHmac('sha256', this.#key).update(input).digest('base64url');
  }
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
