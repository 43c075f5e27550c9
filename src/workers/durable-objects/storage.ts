import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** An object's id as workerd names its file: 64 hex digits. */
const OBJECT_FILE = /^([0-9a-f]{64})\.sqlite$/;
/** A namespace's directory: its id (shared/ids.ts newId, 32 hex digits). */
const NAMESPACE_DIR = /^[0-9a-f]{32}$/;

/**
 * The Durable Objects' files: `<root>/<account>/<namespace id>/<object id>.sqlite`, written by workerd's
 * `localDisk` storage (one disk per account, each class under its namespace id: see
 * workerd/config/bindings/durable-object.ts). Node only lists them and removes what no namespace owns.
 */
export class DurableObjectStorage {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** The ids of a namespace's objects that have stored data, in order, after `cursor`. */
  async listObjects(
    accountId: string,
    namespaceId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<{ ids: string[]; cursor: string | undefined }> {
    const names = await readdir(join(this.root, accountId, namespaceId)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[];
      throw error;
    });
    const ids = names
      .flatMap((name) => OBJECT_FILE.exec(name)?.[1] ?? [])
      .sort()
      .filter((id) => page.cursor === undefined || id > page.cursor);
    const shown = ids.slice(0, page.limit);
    return { ids: shown, cursor: ids.length > page.limit ? shown.at(-1) : undefined };
  }

  /**
   * Removes the data of every namespace of the account that is not in `keep` (a deleted class, a deleted
   * script's classes). Run once the processes that hosted them have stopped.
   */
  async sweep(accountId: string, keep: ReadonlySet<string>): Promise<string[]> {
    const dir = join(this.root, accountId);
    const names = await readdir(dir).catch(() => [] as string[]);
    const gone = names.filter((name) => NAMESPACE_DIR.test(name) && !keep.has(name));
    await Promise.all(gone.map((name) => rm(join(dir, name), { recursive: true, force: true })));
    return gone;
  }
}
