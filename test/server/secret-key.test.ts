import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../helpers/backends.ts';
import { startLedge, tempDir } from '../helpers/ledge.ts';

const key = () => randomBytes(32).toString('base64');

describe('the secrets key is one per database', () => {
  it('refuses a node whose key differs from the one the shared PostgreSQL database was sealed with', async () => {
    const database = await freshPostgresDatabase();
    const shared = key();
    try {
      const first = await startLedge({ flags: { databaseUrl: database.url }, env: { LEDGE_SECRET_KEY: shared } });
      await first.close();
      // A second node with its own data dir and no key would make its own secret.key: refused, by name.
      await expect(startLedge({ flags: { databaseUrl: database.url } })).rejects.toThrow(
        /sealed with another key than .*secret\.key: start every node .* same LEDGE_SECRET_KEY/,
      );
      await expect(
        startLedge({ flags: { databaseUrl: database.url }, env: { LEDGE_SECRET_KEY: key() } }),
      ).rejects.toThrow(/another key than LEDGE_SECRET_KEY/);
      // The same key in another data dir: a second node of the same cluster.
      const second = await startLedge({ flags: { databaseUrl: database.url }, env: { LEDGE_SECRET_KEY: shared } });
      await second.close();
    } finally {
      await database.drop();
    }
  });

  it('refuses a SQLite data dir started with another LEDGE_SECRET_KEY than its secret.key', async () => {
    const dataDir = tempDir();
    const first = await startLedge({ dataDir });
    await first.close();
    await expect(startLedge({ dataDir, env: { LEDGE_SECRET_KEY: key() } })).rejects.toThrow(/sealed with another key/);
    const again = await startLedge({ dataDir });
    await again.close();
  });
});
