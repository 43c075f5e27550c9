import type { SchemaMigration, SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/crypto.ts';
import { isoNow } from '../shared/time.ts';

export const secretKeyCheckMigrations: readonly SchemaMigration[] = [
  {
    id: 'server/0001_secret_key_check',
    sql: 'CREATE TABLE secret_key_check (id INTEGER PRIMARY KEY, fingerprint TEXT NOT NULL, recorded_at TEXT NOT NULL)',
  },
];

/**
 * Refuses to start with another key than the one this database's secrets were sealed with. Nodes that
 * share a database must share the key (LEDGE_SECRET_KEY); a node that made its own `secret.key` would
 * otherwise seal secrets no other node can open, and fail to open theirs. The first start records the
 * key's fingerprint (an HMAC, not the key).
 */
export async function checkSecretKey(db: SqlDatabase, box: SecretBox, keySource: string, clock: Clock): Promise<void> {
  const fingerprint = box.fingerprint();
  await db.run(
    'INSERT INTO secret_key_check (id, fingerprint, recorded_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING',
    [fingerprint, isoNow(clock)],
  );
  const recorded = await db.get<{ fingerprint: string }>('SELECT fingerprint FROM secret_key_check WHERE id = 1');
  if (recorded?.fingerprint !== fingerprint) {
    throw new Error(
      `the secrets in this database were sealed with another key than ${keySource}: ` +
        'start every node that shares the database with the same LEDGE_SECRET_KEY (32 bytes, base64)',
    );
  }
}
