import type { SqlExecutor } from '../../db/index.ts';

/** The ACME state of one hostname, as the API shows it (GET /zones/{id}/ssl/certificate_packs). */
export interface AcmeOrderState {
  hostname: string;
  zone_id: string;
  /** `pending` (being ordered), `issued`, `failed` (retried at next_attempt_on). */
  status: 'pending' | 'issued' | 'failed';
  certificate_id: string | null;
  last_error: string | null;
  failures: number;
  next_attempt_on: string;
  modified_on: string;
}

/** `tls_acme_orders`. */
export class OrderStore {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async get(hostname: string): Promise<AcmeOrderState | undefined> {
    const row = await this.#db.get<AcmeOrderState>('SELECT * FROM tls_acme_orders WHERE hostname = ?', [hostname]);
    return row ? { ...row, failures: Number(row.failures) } : undefined;
  }

  async listByZone(zoneId: string): Promise<AcmeOrderState[]> {
    const rows = await this.#db.all<AcmeOrderState>(
      'SELECT * FROM tls_acme_orders WHERE zone_id = ? ORDER BY hostname',
      [zoneId],
    );
    return rows.map((row) => ({ ...row, failures: Number(row.failures) }));
  }

  async put(state: AcmeOrderState): Promise<void> {
    await this.#db.run('DELETE FROM tls_acme_orders WHERE hostname = ?', [state.hostname]);
    await this.#db.run(
      `INSERT INTO tls_acme_orders (hostname, zone_id, status, certificate_id, last_error, failures, next_attempt_on, modified_on)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        state.hostname,
        state.zone_id,
        state.status,
        state.certificate_id,
        state.last_error,
        state.failures,
        state.next_attempt_on,
        state.modified_on,
      ],
    );
  }
}
