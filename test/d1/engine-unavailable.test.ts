import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createD1Subsystem } from '../../src/d1/index.ts';
import { applyMigrations, openDatabase } from '../../src/db/index.ts';
import { allMigrations } from '../../src/server/migrations.ts';
import { systemClock } from '../../src/shared/clock.ts';
import { isLedgeError } from '../../src/shared/errors.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { EngineHost, engineKinds } from '../../src/workerd/index.ts';

describe('a database created while its engines cannot start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledge-d1-down-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers 503 (the server's trouble, not the client's)", async () => {
    const db = openDatabase(undefined, join(dir, 'ledge.db'));
    await applyMigrations(db, allMigrations, systemClock);
    const account = 'a'.repeat(32);
    await db.run('INSERT INTO accounts (id, name, type, created_on) VALUES (?, ?, ?, ?)', [
      account,
      'A',
      'standard',
      '2026-01-01T00:00:00Z',
    ]);
    // A runtime directory this long leaves no room for the engines' unix socket paths: they cannot start.
    const engines = new EngineHost({
      runtimeDir: join(dir, 'r'.repeat(120)),
      dataDir: join(dir, 'engines'),
      kinds: engineKinds({ d1: { maxDatabaseBytes: 1024 * 1024 } }),
      logger: createLogger('error', systemClock),
      clock: systemClock,
      accounts: async () => [],
    });
    const d1 = createD1Subsystem({ db, engines, transfersDir: join(dir, 'transfers'), clock: systemClock });
    const failure = await d1.service.create(account, { name: 'down' }).catch((error: unknown) => error);
    expect(isLedgeError(failure) && [failure.status, failure.code]).toEqual([503, 7500]);
    await db.close();
  });
});
