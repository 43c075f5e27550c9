import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Database, migrate } from '../../src/db/index.ts';
import { FsBlobStore, SqliteMetadataStore, storageMigrations } from '../../src/storage/index.ts';
import { tempDir } from '../helpers/ledge.ts';
import { blobStoreConformance } from './conformance/blob-store.ts';
import { engineConformance } from './conformance/engine.ts';
import { metadataStoreConformance } from './conformance/metadata-store.ts';

function sqliteStore() {
  const dir = tempDir('ledge-meta-');
  const db = new Database(join(dir, 'ledge.db'));
  migrate(db, storageMigrations);
  return {
    db,
    store: new SqliteMetadataStore(db),
    close: () => (db.close(), rmSync(dir, { recursive: true, force: true })),
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

metadataStoreConformance('SQLite', sqliteStore);
blobStoreConformance('filesystem', fsBlobs);
engineConformance('SQLite + filesystem', () => {
  const meta = sqliteStore();
  const blobs = fsBlobs();
  return {
    store: meta.store,
    blobs: blobs.blobs,
    close: () => {
      meta.close();
      blobs.close();
    },
  };
});
