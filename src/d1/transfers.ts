import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Clock } from '../shared/clock.ts';
import { D1Errors } from './errors.ts';
import type { D1DatabaseRecord } from './schemas.ts';
import type { AggregateMeta, D1Service } from './service.ts';
import { splitStatements } from './statements.ts';

/** How long an upload URL and an export's download URL stay valid (wrangler says one hour for exports). */
export const TRANSFER_TTL_MS = 60 * 60 * 1000;

/** The largest SQL file an import takes: it is run whole, in one transaction. */
export const DEFAULT_IMPORT_MAX_BYTES = 256 * 1024 * 1024;

interface Upload {
  token: string;
  accountId: string;
  databaseId: string;
  etag: string;
  filename: string;
  path: string;
  expiresAt: number;
  uploaded: boolean;
}

interface Download {
  path: string;
  filename: string;
  expiresAt: number;
}

/** What an import answers (the SDK's DatabaseImportResponse); wrangler polls until `status` is complete. */
export interface ImportAnswer {
  success: boolean;
  type: 'import';
  status?: 'complete' | 'error';
  at_bookmark?: string;
  messages: string[];
  errors?: string[];
  error?: string;
  filename?: string;
  upload_url?: string;
  result?: { num_queries: number; final_bookmark: string; meta: AggregateMeta };
}

/**
 * `import` and `export` as wrangler drives them. An import uploads its file to a URL of ours (the PUT
 * answers the file's MD5 as its ETag, which wrangler compares), then `ingest` runs every statement of it
 * in one call to the engine, so a failing statement leaves the database as it was. An export dumps the
 * database to a file served once at an unguessable URL for an hour. The files live in this node's data
 * directory: on several nodes, the upload and the ingest must reach the same node.
 */
export class D1Transfers {
  readonly #d1: D1Service;
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #importMaxBytes: number;
  readonly #uploads = new Map<string, Upload>();
  readonly #downloads = new Map<string, Download>();
  /** The last finished import of each database, for `poll`. */
  readonly #finished = new Map<string, ImportAnswer>();

  constructor(deps: { d1: D1Service; dir: string; clock: Clock; importMaxBytes?: number | undefined }) {
    this.#d1 = deps.d1;
    this.#dir = deps.dir;
    this.#clock = deps.clock;
    this.#importMaxBytes = deps.importMaxBytes ?? DEFAULT_IMPORT_MAX_BYTES;
  }

  get importMaxBytes(): number {
    return this.#importMaxBytes;
  }

  /** `init`: where to PUT the file whose MD5 is `etag`. */
  async initImport(database: D1DatabaseRecord, etag: string, origin: string): Promise<ImportAnswer> {
    await this.#sweep();
    const token = randomBytes(24).toString('base64url');
    const filename = `${database.uuid}-${etag}.sql`;
    this.#uploads.set(token, {
      token,
      accountId: database.account_id,
      databaseId: database.uuid,
      etag,
      filename,
      path: join(this.#dir, `upload-${token}.sql`),
      expiresAt: this.#clock.now() + TRANSFER_TTL_MS,
      uploaded: false,
    });
    return {
      success: true,
      type: 'import',
      messages: [],
      filename,
      upload_url: `${origin}/client/v4/d1/uploads/${token}`,
    };
  }

  /** The PUT of an upload URL: the file, whose MD5 is answered as its ETag. */
  async receive(token: string, body: ReadableStream<Uint8Array> | null): Promise<string> {
    const upload = this.#live(this.#uploads, token);
    if (!upload) throw D1Errors.importNotFound();
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const chunks: Buffer[] = [];
    const md5 = createHash('md5');
    if (body) {
      for await (const chunk of Readable.fromWeb(body as WebReadableStream<Uint8Array>)) {
        const bytes = chunk as Buffer;
        md5.update(bytes);
        chunks.push(bytes);
      }
    }
    const etag = md5.digest('hex');
    await writeFile(upload.path, Buffer.concat(chunks), { mode: 0o600 });
    upload.uploaded = etag === upload.etag;
    return etag;
  }

  /** `ingest`: runs the uploaded file, all of it or nothing. */
  async ingest(database: D1DatabaseRecord, filename: string, etag: string): Promise<ImportAnswer> {
    const upload = [...this.#uploads.values()].find(
      (u) => u.databaseId === database.uuid && u.filename === filename && u.etag === etag && u.uploaded,
    );
    if (!upload) throw D1Errors.importNotFound();
    this.#uploads.delete(upload.token);
    let answer: ImportAnswer;
    try {
      const statements = splitStatements(await readFile(upload.path, 'utf8')).map((sql) => ({ sql }));
      const { meta, bookmark } = await this.#d1.execute(database, statements, { bookmark: true });
      const finalBookmark = bookmark ?? '';
      answer = {
        success: true,
        type: 'import',
        status: 'complete',
        at_bookmark: finalBookmark,
        messages: [`Processed ${statements.length} queries.`],
        result: { num_queries: statements.length, final_bookmark: finalBookmark, meta },
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // As D1: the import failed as a whole, and the database is as it was before it.
      answer = { success: false, type: 'import', status: 'error', messages: [], errors: [message], error: message };
    } finally {
      await rm(upload.path, { force: true });
    }
    this.#finished.set(database.uuid, answer);
    return answer;
  }

  /** `poll`: the database's last finished import. */
  poll(database: D1DatabaseRecord): ImportAnswer {
    const answer = this.#finished.get(database.uuid);
    if (!answer) throw D1Errors.importNotFound();
    return answer;
  }

  /** An export, done at once: the answer says where to download it. */
  async exportDatabase(
    database: D1DatabaseRecord,
    options: { noSchema: boolean; noData: boolean; tables: string[] },
    origin: string,
  ) {
    await this.#sweep();
    const lines = await this.#d1.dump(database, options);
    const token = randomBytes(24).toString('base64url');
    const path = join(this.#dir, `export-${token}.sql`);
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await writeFile(path, lines.join('\n'), { mode: 0o600 });
    const filename = `${database.name}-${new Date(this.#clock.now()).toISOString().replace(/[:.]/g, '-')}.sql`;
    this.#downloads.set(token, { path, filename, expiresAt: this.#clock.now() + TRANSFER_TTL_MS });
    return {
      success: true,
      type: 'export' as const,
      status: 'complete' as const,
      at_bookmark: '',
      messages: [`Exported ${lines.length} statements.`],
      result: { filename, signed_url: `${origin}/client/v4/d1/exports/${token}` },
    };
  }

  /** An export's file, while its URL is valid. */
  async download(token: string): Promise<{ stream: Readable; size: number; filename: string } | undefined> {
    const download = this.#live(this.#downloads, token);
    if (!download) return undefined;
    const { size } = await stat(download.path);
    return { stream: createReadStream(download.path), size, filename: download.filename };
  }

  #live<T extends { expiresAt: number }>(map: Map<string, T>, token: string): T | undefined {
    const entry = map.get(token);
    return entry && entry.expiresAt > this.#clock.now() ? entry : undefined;
  }

  /** Forgets expired URLs and removes their files. */
  async #sweep(): Promise<void> {
    const now = this.#clock.now();
    for (const map of [this.#uploads, this.#downloads] as Map<string, { path: string; expiresAt: number }>[]) {
      for (const [token, entry] of map) {
        if (entry.expiresAt > now) continue;
        map.delete(token);
        await rm(entry.path, { force: true });
      }
    }
  }
}
