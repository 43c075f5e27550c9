import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe } from 'vitest';
import { applyMigrations } from '../../src/db/index.ts';
import { FsBlobStore, SqlMetadataStore, storageMigrations } from '../../src/storage/index.ts';
import { accountMigrations } from '../../src/accounts/index.ts';
import { BACKENDS, openTestDatabase } from '../helpers/backends.ts';
import { tempDir } from '../helpers/ledge.ts';
import { blobStoreConformance } from './conformance/blob-store.ts';
import { engineConformance } from './conformance/engine.ts';
import { metadataStoreConformance } from './conformance/metadata-store.ts';
import { metadataStoreRaces } from './conformance/metadata-store-races.ts';
import type { DialectName } from '../../src/db/index.ts';
import { systemClock } from '../../src/shared/clock.ts';

/** A SqlMetadataStore on a fresh database of `backend`, and a second one on another handle. */
async function sqlStore(backend: DialectName) {
  const test = await openTestDatabase(backend);
  await applyMigrations(test.db, [...accountMigrations, ...storageMigrations], systemClock);
  return {
    store: new SqlMetadataStore(test.db, systemClock),
    secondStore: new SqlMetadataStore(test.reopen(), systemClock),
    close: () => test.close(),
  };
}

function fsBlobs() {
  const dir = tempDir('ledge-blobs-');
  return {
    root: dir,
    blobs: new FsBlobStore(join(dir, 'blobs')),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

describe.each(BACKENDS)('%s', (backend) => {
  metadataStoreConformance(backend, () => sqlStore(backend));
  metadataStoreRaces(backend, () => sqlStore(backend));
  engineConformance(`${backend} + filesystem`, async () => {
    const meta = await sqlStore(backend);
    const blobs = fsBlobs();
    return {
      store: meta.store,
      blobs: blobs.blobs,
      close: async () => {
        await meta.close();
        blobs.close();
      },
    };
  });
});
blobStoreConformance('filesystem', fsBlobs);
