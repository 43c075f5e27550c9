import { fromSqlBool, toSqlBool, type SqlDatabase, type SqlValue } from '../../db/index.ts';
import type { Clock } from '../../shared/clock.ts';

/** A custom domain as stored: a hostname that serves one bucket read-only on the traffic port. */
export interface CustomDomainRecord {
  domain: string;
  bucketId: string;
  zoneId: string;
  enabled: boolean;
  /** Kept and shown as the API takes it; Ledge terminates no TLS, so it has no effect. */
  minTLS: string | undefined;
  ciphers: string[] | undefined;
  createdAt: number;
}

/** A hostname the traffic port serves a bucket on, with the bucket it serves. */
export interface PublicHostRow {
  /** The custom domain; undefined for a bucket's managed public URL (named from the bucket id). */
  domain: string | undefined;
  bucketId: string;
  accountId: string;
  bucketName: string;
}

export type CustomDomainInsert = 'inserted' | 'exists' | 'no-bucket-or-zone';

/**
 * Persistence of public access (SQLite or PostgreSQL: `SqlPublicDomainStore`): the managed URL switch per
 * bucket and custom domains. A domain is unique across the platform; rows go with their bucket and zone.
 */
export interface PublicDomainStore {
  /** Whether the bucket's managed public URL is on (false when never set). */
  managedEnabled(bucketId: string): Promise<boolean>;
  /** False when the bucket no longer exists. */
  setManaged(bucketId: string, enabled: boolean): Promise<boolean>;
  /** The bucket's custom domains, by name. */
  listCustom(bucketId: string): Promise<CustomDomainRecord[]>;
  getCustom(domain: string): Promise<CustomDomainRecord | undefined>;
  /** The insert decides a race for one domain; refused when the bucket or zone is gone. */
  insertCustom(record: CustomDomainRecord): Promise<CustomDomainInsert>;
  /** Changes a domain of this bucket; undefined when it has no such domain. */
  updateCustom(
    bucketId: string,
    domain: string,
    patch: { enabled?: boolean | undefined; minTLS?: string | undefined; ciphers?: string[] | undefined },
  ): Promise<CustomDomainRecord | undefined>;
  /** False when the bucket has no such domain. */
  deleteCustom(bucketId: string, domain: string): Promise<boolean>;
  /** Removes every custom domain in a zone (before the zone goes); returns how many. */
  deleteZoneDomains(zoneId: string): Promise<number>;
  /** Every enabled managed URL and custom domain with its bucket: what the traffic port serves. */
  publicHosts(): Promise<PublicHostRow[]>;
}

interface CustomRow {
  domain: string;
  bucket_id: string;
  zone_id: string;
  enabled: number | boolean;
  min_tls: string | null;
  ciphers: string | null;
  created_at: number;
}

export class SqlPublicDomainStore implements PublicDomainStore {
  readonly #db: SqlDatabase;

  readonly #clock: Clock;

  constructor(db: SqlDatabase, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
  }

  async managedEnabled(bucketId: string): Promise<boolean> {
    const row = await this.#db.get<{ enabled: number | boolean }>(
      'SELECT enabled FROM r2_managed_domains WHERE bucket_id = ?',
      [bucketId],
    );
    return row ? fromSqlBool(row.enabled) : false;
  }

  async setManaged(bucketId: string, enabled: boolean): Promise<boolean> {
    // INSERT ... SELECT: a bucket deleted meanwhile inserts nothing instead of failing its foreign key.
    const result = await this.#db.run(
      `INSERT INTO r2_managed_domains (bucket_id, enabled, updated_at)
       SELECT id, ?, ? FROM r2_buckets WHERE id = ?
       ON CONFLICT (bucket_id) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`,
      [toSqlBool(enabled), this.#clock.now(), bucketId],
    );
    return result.changes > 0;
  }

  async listCustom(bucketId: string): Promise<CustomDomainRecord[]> {
    const rows = await this.#db.all<CustomRow>('SELECT * FROM r2_custom_domains WHERE bucket_id = ? ORDER BY domain', [
      bucketId,
    ]);
    return rows.map(toRecord);
  }

  async getCustom(domain: string): Promise<CustomDomainRecord | undefined> {
    const row = await this.#db.get<CustomRow>('SELECT * FROM r2_custom_domains WHERE domain = ?', [domain]);
    return row && toRecord(row);
  }

  async insertCustom(record: CustomDomainRecord): Promise<CustomDomainInsert> {
    const result = await this.#db.run(
      `INSERT INTO r2_custom_domains (domain, bucket_id, zone_id, enabled, min_tls, ciphers, created_at)
       SELECT ?, b.id, z.id, ?, ?, ?, ? FROM r2_buckets b, zones z WHERE b.id = ? AND z.id = ?
       ON CONFLICT (domain) DO NOTHING`,
      [
        record.domain,
        toSqlBool(record.enabled),
        record.minTLS ?? null,
        record.ciphers ? JSON.stringify(record.ciphers) : null,
        record.createdAt,
        record.bucketId,
        record.zoneId,
      ],
    );
    if (result.changes > 0) return 'inserted';
    return (await this.getCustom(record.domain)) ? 'exists' : 'no-bucket-or-zone';
  }

  async updateCustom(
    bucketId: string,
    domain: string,
    patch: { enabled?: boolean | undefined; minTLS?: string | undefined; ciphers?: string[] | undefined },
  ): Promise<CustomDomainRecord | undefined> {
    const sets: string[] = [];
    const params: SqlValue[] = [];
    if (patch.enabled !== undefined) {
      sets.push('enabled = ?');
      params.push(toSqlBool(patch.enabled));
    }
    if (patch.minTLS !== undefined) {
      sets.push('min_tls = ?');
      params.push(patch.minTLS);
    }
    if (patch.ciphers !== undefined) {
      sets.push('ciphers = ?');
      params.push(JSON.stringify(patch.ciphers));
    }
    if (sets.length > 0) {
      await this.#db.run(`UPDATE r2_custom_domains SET ${sets.join(', ')} WHERE domain = ? AND bucket_id = ?`, [
        ...params,
        domain,
        bucketId,
      ]);
    }
    const record = await this.getCustom(domain);
    return record?.bucketId === bucketId ? record : undefined;
  }

  async deleteCustom(bucketId: string, domain: string): Promise<boolean> {
    const result = await this.#db.run('DELETE FROM r2_custom_domains WHERE domain = ? AND bucket_id = ?', [
      domain,
      bucketId,
    ]);
    return result.changes > 0;
  }

  async deleteZoneDomains(zoneId: string): Promise<number> {
    return (await this.#db.run('DELETE FROM r2_custom_domains WHERE zone_id = ?', [zoneId])).changes;
  }

  async publicHosts(): Promise<PublicHostRow[]> {
    const rows = await this.#db.all<{ domain: string | null; bucket_id: string; account_id: string; name: string }>(
      `SELECT NULL AS domain, b.id AS bucket_id, b.account_id, b.name
         FROM r2_managed_domains m JOIN r2_buckets b ON b.id = m.bucket_id WHERE m.enabled = ?
       UNION ALL
       SELECT c.domain, b.id AS bucket_id, b.account_id, b.name
         FROM r2_custom_domains c JOIN r2_buckets b ON b.id = c.bucket_id WHERE c.enabled = ?`,
      [toSqlBool(true), toSqlBool(true)],
    );
    return rows.map((row) => ({
      domain: row.domain ?? undefined,
      bucketId: row.bucket_id,
      accountId: row.account_id,
      bucketName: row.name,
    }));
  }
}

function toRecord(row: CustomRow): CustomDomainRecord {
  return {
    domain: row.domain,
    bucketId: row.bucket_id,
    zoneId: row.zone_id,
    enabled: fromSqlBool(row.enabled),
    minTLS: row.min_tls ?? undefined,
    ciphers: row.ciphers ? (JSON.parse(row.ciphers) as string[]) : undefined,
    createdAt: row.created_at,
  };
}
