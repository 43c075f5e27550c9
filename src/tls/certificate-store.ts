import type { SqlExecutor } from '../db/index.ts';

/** A certificate as stored: the chain in clear, the private key sealed (SecretBox, bound to the row's id). */
export interface StoredCertificate {
  id: string;
  zone_id: string;
  /** `custom`: uploaded through /custom_certificates; `acme`: ordered by Ledge. */
  source: 'custom' | 'acme';
  hosts: string[];
  certificate: string;
  sealed_key: string;
  issuer: string;
  signature: string;
  bundle_method: string;
  priority: number;
  expires_on: string;
  uploaded_on: string;
  modified_on: string;
}

type Row = Omit<StoredCertificate, 'hosts' | 'priority'> & { hosts: string; priority: number | bigint };

const COLUMNS =
  'id, zone_id, source, hosts, certificate, sealed_key, issuer, signature, bundle_method, priority, expires_on, uploaded_on, modified_on';

function fromRow(row: Row): StoredCertificate {
  return { ...row, hosts: JSON.parse(row.hosts) as string[], priority: Number(row.priority) };
}

/** The `tls_certificates` table (SQLite and PostgreSQL alike). */
export class CertificateStore {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async all(): Promise<StoredCertificate[]> {
    const rows = await this.#db.all<Row>(`SELECT ${COLUMNS} FROM tls_certificates ORDER BY id`);
    return rows.map(fromRow);
  }

  async listByZone(zoneId: string, source: StoredCertificate['source']): Promise<StoredCertificate[]> {
    const rows = await this.#db.all<Row>(
      `SELECT ${COLUMNS} FROM tls_certificates WHERE zone_id = ? AND source = ? ORDER BY priority, uploaded_on, id`,
      [zoneId, source],
    );
    return rows.map(fromRow);
  }

  async get(zoneId: string, id: string): Promise<StoredCertificate | undefined> {
    const row = await this.#db.get<Row>(`SELECT ${COLUMNS} FROM tls_certificates WHERE zone_id = ? AND id = ?`, [
      zoneId,
      id,
    ]);
    return row ? fromRow(row) : undefined;
  }

  async put(certificate: StoredCertificate): Promise<void> {
    const c = certificate;
    await this.#db.run(`DELETE FROM tls_certificates WHERE id = ?`, [c.id]);
    await this.#db.run(`INSERT INTO tls_certificates (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      c.id,
      c.zone_id,
      c.source,
      JSON.stringify(c.hosts),
      c.certificate,
      c.sealed_key,
      c.issuer,
      c.signature,
      c.bundle_method,
      c.priority,
      c.expires_on,
      c.uploaded_on,
      c.modified_on,
    ]);
  }

  async delete(zoneId: string, id: string): Promise<boolean> {
    const result = await this.#db.run(`DELETE FROM tls_certificates WHERE zone_id = ? AND id = ?`, [zoneId, id]);
    return result.changes > 0;
  }
}
