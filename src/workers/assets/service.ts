import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BlobNotFoundError, type BlobStore, type StoredBlob } from '../../storage/index.ts';
import { inParallel } from '../../shared/parallel.ts';
import type { Clock } from '../../shared/clock.ts';
import { clip, LedgeError } from '../../shared/errors.ts';
import type { SqlAssetStore } from './asset-store.ts';
import { AssetTokens } from './tokens.ts';
import { ASSET_LIMITS, ASSET_HASH, type AssetManifest } from './schemas.ts';

/** Files per upload request (a bucket), and their bytes: one request stays under UPLOAD_REQUEST_LIMIT as base64. */
const FILES_PER_BUCKET = 50;
const BUCKET_BYTES = 30 * 1024 * 1024;
/** The largest upload request: a bucket of BUCKET_BYTES, or one 25 MiB file, in base64 and multipart. */
export const UPLOAD_REQUEST_LIMIT = 48 * 1024 * 1024;
/** A file untouched this long and named by no version is collected: longer than any session lives. */
const COLLECT_AFTER_MS = 2 * ASSET_LIMITS.sessionSeconds * 1000;
/** Blob writes in flight at once for a store without `writeMany` (S3: one request each). */
const PARALLEL_WRITES = 8;
/** Files linked or copied at once into a version's directory. */
const PARALLEL_PLACES = 8;

export const AssetErrors = {
  sessionNotFound: () =>
    new LedgeError(400, 10021, 'The assets upload session does not exist (or has expired): deploy again.'),
  notInSession: (hash: string) =>
    new LedgeError(400, 10021, `The file "${clip(hash)}" is not part of this assets upload session's manifest.`),
  badBase64: (hash: string) => new LedgeError(400, 10021, `The file "${clip(hash)}" is not valid base64.`),
  sizeMismatch: (hash: string, expected: number, got: number) =>
    new LedgeError(400, 10021, `The file "${clip(hash)}" has ${got} bytes; the manifest says ${expected}.`),
  missingFiles: (count: number) =>
    new LedgeError(
      400,
      10021,
      `${count} asset file${count === 1 ? ' was' : 's were'} never uploaded for this session: upload them before deploying.`,
    ),
  noFiles: () => new LedgeError(400, 10021, 'The upload carries no files: send one form field per file hash.'),
};

/**
 * Static assets of Workers: upload sessions (a manifest, then the files still missing), the account's
 * content-addressed files in the blob store, each version's files as a directory the runtime's `assets`
 * service reads, and the collection of files no version names any more.
 */
export class AssetsService {
  readonly #store: SqlAssetStore;
  readonly #blobs: BlobStore;
  readonly #tokens: AssetTokens;
  readonly #clock: Clock;
  readonly #dir: string;

  constructor(deps: { store: SqlAssetStore; blobs: BlobStore; tokenKey: Buffer; clock: Clock; directory: string }) {
    this.#store = deps.store;
    this.#blobs = deps.blobs;
    this.#tokens = new AssetTokens(deps.tokenKey);
    this.#clock = deps.clock;
    this.#dir = deps.directory;
  }

  /**
   * Starts an upload session: the files of `manifest` the account lacks, in buckets; with none missing,
   * the token is already the completion token.
   */
  async startSession(accountId: string, scriptName: string, manifest: AssetManifest) {
    const now = this.#clock.now();
    const hashes = [...new Set(Object.values(manifest).map((e) => e.hash))];
    const stored = await this.#store.files(accountId, hashes);
    // Counted on by this session: collection leaves them alone until it is over.
    await this.#store.touch(accountId, [...stored.keys()], now);
    const missing = hashes.filter((h) => !stored.has(h));
    const id = randomUUID();
    const exp = Math.floor(now / 1000) + ASSET_LIMITS.sessionSeconds;
    await this.#store.createSession({
      id,
      account_id: accountId,
      script_name: scriptName,
      manifest,
      expires_at: exp * 1000,
    });
    const sizes = new Map(Object.values(manifest).map((e) => [e.hash, e.size]));
    const buckets: string[][] = [];
    let bucket: string[] = [];
    let bytes = 0;
    for (const hash of missing) {
      const size = sizes.get(hash)!;
      if (bucket.length > 0 && (bucket.length >= FILES_PER_BUCKET || bytes + size > BUCKET_BYTES)) {
        buckets.push(bucket);
        bucket = [];
        bytes = 0;
      }
      bucket.push(hash);
      bytes += size;
    }
    if (bucket.length > 0) buckets.push(bucket);
    const use = missing.length === 0 ? 'complete' : 'upload';
    return { jwt: this.#tokens.sign({ sub: id, aid: accountId, use, exp }), buckets };
  }

  /**
   * Stores the files of one upload request (form fields named by hash, base64 when `base64` is set). Answers
   * the completion token once every file of the session is stored, and nothing before.
   */
  async upload(accountId: string, token: string, form: FormData, base64: boolean): Promise<{ jwt?: string }> {
    const now = this.#clock.now();
    const claims = this.#tokens.verify(token, 'upload', Math.floor(now / 1000));
    if (claims.aid !== accountId) throw AssetErrors.sessionNotFound();
    const session = await this.#store.getSession(accountId, claims.sub);
    if (!session) throw AssetErrors.sessionNotFound();
    const sizes = new Map(Object.values(session.manifest).map((e) => [e.hash, e.size]));
    const files: { hash: string; bytes: Buffer }[] = [];
    for (const [hash, value] of form.entries()) {
      const expected = sizes.get(hash);
      if (!ASSET_HASH.test(hash) || expected === undefined) throw AssetErrors.notInSession(hash);
      const raw = typeof value === 'string' ? Buffer.from(value) : Buffer.from(await value.arrayBuffer());
      const bytes = base64 ? decodeBase64(raw.toString('latin1'), hash) : raw;
      if (bytes.length !== expected) throw AssetErrors.sizeMismatch(hash, expected, bytes.length);
      files.push({ hash, bytes });
    }
    if (files.length === 0) throw AssetErrors.noFiles();
    // Checked whole before anything is stored: a bad request stores nothing. The bytes are durable before
    // the rows that name them are written, so a row never outlives its file (a crash in between leaves
    // unnamed blobs, which orphan collection removes).
    const blobs = await this.#writeBlobs(
      accountId,
      files.map((f) => f.bytes),
    );
    const rows = files.map((file, i) => ({ hash: file.hash, blob_id: blobs[i]!.blobId, size: blobs[i]!.size }));
    const duplicates = await this.#store.addFiles(accountId, rows, now);
    if (duplicates.length > 0) await this.#blobs.delete(duplicates.map((row) => row.blob_id));
    const stored = await this.#store.files(accountId, [...sizes.keys()]);
    if (stored.size < sizes.size) return {};
    return { jwt: this.#tokens.sign({ sub: session.id, aid: accountId, use: 'complete', exp: claims.exp }) };
  }

  /** The manifest a completion token stands for, once all its files are stored for the account. */
  async completedManifest(accountId: string, token: string): Promise<AssetManifest> {
    const now = this.#clock.now();
    const claims = this.#tokens.verify(token, 'complete', Math.floor(now / 1000));
    if (claims.aid !== accountId) throw AssetErrors.sessionNotFound();
    const session = await this.#store.getSession(accountId, claims.sub);
    if (!session) throw AssetErrors.sessionNotFound();
    const hashes = [...new Set(Object.values(session.manifest).map((e) => e.hash))];
    const stored = await this.#store.files(accountId, hashes);
    if (stored.size < hashes.length) throw AssetErrors.missingFiles(hashes.length - stored.size);
    await this.#store.touch(accountId, hashes, now);
    return session.manifest;
  }

  /** Where a version's files are (or will be) for the runtime: one directory per account and version. */
  versionDirectory(accountId: string, versionId: string): string {
    return join(this.#dir, accountId, versionId);
  }

  /**
   * Writes a version's files into its directory, once: hard links to the blob files when the store keeps
   * files here, copies from the store otherwise (S3). Built aside and renamed, so a directory that exists
   * is whole.
   */
  async materialise(accountId: string, versionId: string, manifest: AssetManifest): Promise<string> {
    const target = this.versionDirectory(accountId, versionId);
    if (await exists(target)) return target;
    const building = join(this.#dir, accountId, `.building-${randomUUID()}`);
    try {
      const hashes = [...new Set(Object.values(manifest).map((e) => e.hash))];
      const stored = await this.#store.files(accountId, hashes);
      const placed = Object.entries(manifest).map(([path, entry]) => {
        const file = stored.get(entry.hash);
        if (!file) throw new BlobNotFoundError(`asset ${entry.hash} of ${accountId} is not stored`);
        return { file, destination: join(building, path.slice(1)) };
      });
      // Each folder made once, then the files side by side: a round of the thread pool per file, not three.
      await mkdir(building, { recursive: true });
      for (const dir of new Set(placed.map((p) => dirname(p.destination)))) await mkdir(dir, { recursive: true });
      await inParallel(placed, PARALLEL_PLACES, ({ file, destination }) =>
        this.#place(file.blob_id, destination, file.size),
      );
      await rename(building, target);
    } catch (error) {
      await rm(building, { recursive: true, force: true });
      if (await exists(target)) return target;
      throw error;
    }
    return target;
  }

  /** Removes the directories of the account versions not in `keep` (`<account>/<version>`). */
  async pruneDirectories(keep: ReadonlySet<string>): Promise<void> {
    for (const account of await readdir(this.#dir).catch(() => [] as string[])) {
      for (const version of await readdir(join(this.#dir, account)).catch(() => [] as string[])) {
        if (version.startsWith('.building-') || keep.has(`${account}/${version}`)) continue;
        await rm(join(this.#dir, account, version), { recursive: true, force: true });
      }
    }
  }

  /**
   * Frees the files no version names that no upload session counted on lately; returns what it freed.
   * Expired sessions go too, and so do orphans: blobs no row names (a crash between an upload's writes and
   * its rows leaves them), once older than any upload request could be, and leftovers of interrupted writes.
   */
  async collect(): Promise<{ files: number; bytes: number; orphans: number }> {
    const now = this.#clock.now();
    await this.#store.deleteExpiredSessions(now);
    const before = now - COLLECT_AFTER_MS;
    const referenced = await this.#store.referenced();
    let files = 0;
    let bytes = 0;
    for (const file of await this.#store.untouchedSince(before)) {
      if (referenced.has(`${file.account_id}/${file.hash}`)) continue;
      if (!(await this.#store.removeFile(file.account_id, file.hash, before))) continue;
      await this.#blobs.delete([file.blob_id]);
      files += 1;
      bytes += file.size;
    }
    return { files, bytes, orphans: await this.#collectOrphans(before) };
  }

  async #collectOrphans(before: number): Promise<number> {
    const named = await this.#store.blobIds();
    const orphans: string[] = [];
    for await (const blob of this.#blobs.list()) {
      if (blob.modifiedAt < before && !named.has(blob.blobId)) orphans.push(blob.blobId);
    }
    await this.#blobs.delete(orphans);
    await this.#blobs.removeTemporaryBefore(before);
    return orphans.length;
  }

  /** Stores the files' bytes: in one go where the store can, else a few writes at a time. */
  async #writeBlobs(accountId: string, files: Buffer[]): Promise<StoredBlob[]> {
    if (this.#blobs.writeMany) return this.#blobs.writeMany(files, { namespace: accountId });
    const stored: StoredBlob[] = new Array<StoredBlob>(files.length);
    const written: string[] = [];
    try {
      await inParallel([...files.keys()], PARALLEL_WRITES, async (i) => {
        stored[i] = await this.#blobs.write(once(files[i]!), { namespace: accountId });
        written.push(stored[i].blobId);
      });
    } catch (error) {
      await this.#blobs.delete(written);
      throw error;
    }
    return stored;
  }

  async #place(blobId: string, destination: string, size: number): Promise<void> {
    const local = this.#blobs.localFile?.(blobId);
    const root = local && this.#blobs.namespaceRoot?.(local.namespace);
    if (local && root) {
      const source = join(root, local.path);
      try {
        await link(source, destination);
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        await copyFile(source, destination);
        return;
      }
    }
    await pipeline(await this.#blobs.read(blobId, { offset: 0, length: size }), createWriteStream(destination));
  }
}

async function* once(bytes: Buffer): AsyncIterable<Uint8Array> {
  yield bytes;
}

function decodeBase64(text: string, hash: string): Buffer {
  const trimmed = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(trimmed) || trimmed.length % 4 === 1) throw AssetErrors.badBase64(hash);
  return Buffer.from(trimmed, 'base64');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
