import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountMigrations } from '../../src/accounts/index.ts';
import { applyMigrations, type SqlDatabase } from '../../src/db/index.ts';
import { r2Migrations } from '../../src/r2/index.ts';
import { SqlPublicDomainStore, type CustomDomainRecord } from '../../src/r2/public/index.ts';
import { SqlMetadataStore, storageMigrations } from '../../src/storage/index.ts';
import { zoneMigrations } from '../../src/zones/index.ts';
import { BACKENDS, openTestDatabase, type TestDatabase } from '../helpers/backends.ts';
import { bucketRecord } from '../storage/conformance/metadata-store.ts';
import { systemClock } from '../../src/shared/clock.ts';

/** The public-access store's contract (managed URL switch, custom domains), on SQLite and PostgreSQL. */
describe.each(BACKENDS)('PublicDomainStore conformance: %s', (backend) => {
  let test: TestDatabase;
  let db: SqlDatabase;
  let store: SqlPublicDomainStore;
  let buckets: SqlMetadataStore;
  const account = 'a'.repeat(32);
  const bucket = bucketRecord(account, 'site');
  const other = bucketRecord(account, 'assets');

  const domain = (name: string, bucketId = bucket.id, zoneId = 'zone-1'): CustomDomainRecord => ({
    domain: name,
    bucketId,
    zoneId,
    enabled: true,
    minTLS: undefined,
    ciphers: undefined,
    createdAt: 1_700_000_000_000,
  });

  beforeEach(async () => {
    test = await openTestDatabase(backend);
    db = test.db;
    await applyMigrations(
      db,
      [...accountMigrations, ...zoneMigrations, ...storageMigrations, ...r2Migrations],
      systemClock,
    );
    await db.run(`INSERT INTO accounts (id, name, type, created_on) VALUES (?, 'A', 'standard', '2026-01-01')`, [
      account,
    ]);
    for (const [id, name] of [
      ['zone-1', 'example.test'],
      ['zone-2', 'other.test'],
    ] as const)
      await db.run(
        `INSERT INTO zones (id, account_id, name, status, type, created_on, modified_on)
         VALUES (?, ?, ?, 'active', 'full', '2026-01-01', '2026-01-01')`,
        [id, account, name],
      );
    buckets = new SqlMetadataStore(db, systemClock);
    await buckets.createBucket(bucket);
    await buckets.createBucket(other);
    store = new SqlPublicDomainStore(db, systemClock);
  });
  afterEach(async () => test.close());

  it('switches the managed URL per bucket, refusing a bucket that is gone', async () => {
    expect(await store.managedEnabled(bucket.id)).toBe(false);
    expect(await store.setManaged(bucket.id, true)).toBe(true);
    expect(await store.managedEnabled(bucket.id)).toBe(true);
    expect(await store.managedEnabled(other.id)).toBe(false);
    expect(await store.setManaged(bucket.id, false)).toBe(true);
    expect(await store.managedEnabled(bucket.id)).toBe(false);
    expect(await store.setManaged('no-such-bucket', true)).toBe(false);
  });

  it('keeps a custom domain unique across buckets, and per bucket for reads, changes and deletes', async () => {
    expect(await store.insertCustom(domain('cdn.example.test'))).toBe('inserted');
    expect(await store.insertCustom(domain('cdn.example.test', other.id))).toBe('exists');
    expect(await store.insertCustom(domain('img.example.test', 'no-such-bucket'))).toBe('no-bucket-or-zone');
    expect(await store.insertCustom(domain('img.example.test', bucket.id, 'no-such-zone'))).toBe('no-bucket-or-zone');
    await store.insertCustom({ ...domain('a.other.test', bucket.id, 'zone-2'), minTLS: '1.2', ciphers: ['ECDHE'] });
    expect((await store.listCustom(bucket.id)).map((d) => d.domain)).toEqual(['a.other.test', 'cdn.example.test']);
    expect(await store.listCustom(other.id)).toEqual([]);
    expect(await store.getCustom('a.other.test')).toEqual({
      ...domain('a.other.test', bucket.id, 'zone-2'),
      minTLS: '1.2',
      ciphers: ['ECDHE'],
    });

    expect(await store.updateCustom(other.id, 'cdn.example.test', { enabled: false })).toBeUndefined();
    expect((await store.getCustom('cdn.example.test'))?.enabled).toBe(true);
    const updated = await store.updateCustom(bucket.id, 'cdn.example.test', { enabled: false, minTLS: '1.3' });
    expect(updated).toMatchObject({ enabled: false, minTLS: '1.3', zoneId: 'zone-1' });
    // An empty patch changes nothing and still answers the record.
    expect(await store.updateCustom(bucket.id, 'cdn.example.test', {})).toEqual(updated);

    expect(await store.deleteCustom(other.id, 'cdn.example.test')).toBe(false);
    expect(await store.deleteCustom(bucket.id, 'cdn.example.test')).toBe(true);
    expect(await store.getCustom('cdn.example.test')).toBeUndefined();
    expect(await store.deleteZoneDomains('zone-2')).toBe(1);
    expect(await store.listCustom(bucket.id)).toEqual([]);
  });

  it('lists the enabled public hosts with their buckets, and forgets a deleted bucket or zone', async () => {
    await store.setManaged(bucket.id, true);
    await store.setManaged(other.id, false);
    await store.insertCustom(domain('cdn.example.test'));
    await store.insertCustom({ ...domain('off.example.test'), enabled: false });
    await store.insertCustom(domain('x.other.test', other.id, 'zone-2'));
    const hosts = await store.publicHosts();
    const key = (h: { domain: string | undefined; bucketName: string }) => `${h.domain ?? '(managed)'}=${h.bucketName}`;
    expect(hosts.map(key).sort()).toEqual(['(managed)=site', 'cdn.example.test=site', 'x.other.test=assets']);
    expect(hosts.find((h) => h.domain === undefined)).toEqual({
      domain: undefined,
      bucketId: bucket.id,
      accountId: account,
      bucketName: 'site',
    });

    await db.run('DELETE FROM zones WHERE id = ?', ['zone-2']);
    expect(await buckets.deleteBucket(account, 'site')).toMatchObject({ status: 'deleted' });
    expect(await store.publicHosts()).toEqual([]);
    expect(await store.getCustom('cdn.example.test')).toBeUndefined();
  });
});
