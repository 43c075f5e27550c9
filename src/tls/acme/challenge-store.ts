import type { SqlExecutor } from '../../db/index.ts';
import type { SecretBox } from '../../shared/crypto.ts';

/** A pending ACME challenge: every node answers it (the CA may reach any of them). */
export interface PendingChallenge {
  hostname: string;
  kind: 'http-01' | 'tls-alpn-01';
  token: string;
  keyAuthorization: string;
  /** TLS-ALPN-01: the self-signed certificate with the acmeIdentifier extension, and its key. */
  material?: { key: string; cert: string } | undefined;
}

const aad = (hostname: string, token: string) => `acme challenge ${hostname} ${token}`;

/** `tls_acme_challenges`; the TLS-ALPN-01 key is sealed like any private key. */
export class ChallengeStore {
  readonly #db: SqlExecutor;
  readonly #box: SecretBox;

  constructor(db: SqlExecutor, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  async all(): Promise<PendingChallenge[]> {
    const rows = await this.#db.all<{
      hostname: string;
      kind: PendingChallenge['kind'];
      token: string;
      key_authorization: string;
      sealed_material: string | null;
    }>('SELECT hostname, kind, token, key_authorization, sealed_material FROM tls_acme_challenges');
    return rows.map((row) => ({
      hostname: row.hostname,
      kind: row.kind,
      token: row.token,
      keyAuthorization: row.key_authorization,
      material: row.sealed_material
        ? (JSON.parse(this.#box.open(row.sealed_material, aad(row.hostname, row.token))) as {
            key: string;
            cert: string;
          })
        : undefined,
    }));
  }

  async add(challenge: PendingChallenge, now: string): Promise<void> {
    const material = challenge.material
      ? this.#box.seal(JSON.stringify(challenge.material), aad(challenge.hostname, challenge.token))
      : null;
    await this.remove(challenge);
    await this.#db.run(
      'INSERT INTO tls_acme_challenges (hostname, kind, token, key_authorization, sealed_material, created_on) VALUES (?, ?, ?, ?, ?, ?)',
      [challenge.hostname, challenge.kind, challenge.token, challenge.keyAuthorization, material, now],
    );
  }

  async remove(challenge: Pick<PendingChallenge, 'hostname' | 'kind' | 'token'>): Promise<void> {
    await this.#db.run('DELETE FROM tls_acme_challenges WHERE hostname = ? AND kind = ? AND token = ?', [
      challenge.hostname,
      challenge.kind,
      challenge.token,
    ]);
  }
}
