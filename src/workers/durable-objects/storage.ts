import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** An object's id as workerd names its file: 64 hex digits. */
const OBJECT_FILE = /^([0-9a-f]{64})\.sqlite$/;
/** A namespace's directory: its id (shared/ids.ts newId, 32 hex digits); an account's is its id, alike. */
const NAMESPACE_DIR = /^[0-9a-f]{32}$/;
const ACCOUNT_DIR = NAMESPACE_DIR;

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
   * Removes this node's data of every namespace of the account that no class owns any more (a deleted class, a
   * deleted script's classes): `<account>/<namespace id>` on one node; on several nodes this node's copies,
   * `<account>/cluster/<script>/<namespace id>`, and a script's whole copy once it has no class. `classes` is read
   * after the directories are, so a class created meanwhile is never taken for a deleted one (ids are never
   * reused). Run once the processes that hosted them have stopped. Returns the paths removed, from the account's.
   */
  async sweep(
    accountId: string,
    classes: () => Promise<readonly { id: string; script_name: string }[]>,
  ): Promise<string[]> {
    const dir = join(this.root, accountId);
    const namespaces = (await entries(dir)).filter((name) => NAMESPACE_DIR.test(name));
    const scripts = await entries(join(dir, 'cluster'));
    const copies = await Promise.all(
      scripts.map(async (script) => ({ script, names: await entries(join(dir, 'cluster', script)) })),
    );
    const known = await classes();
    const ids = new Set(known.map((c) => c.id));
    const hosting = new Set(known.map((c) => c.script_name));
    const gone = [
      ...namespaces.filter((name) => !ids.has(name)),
      ...copies.flatMap(({ script, names }) =>
        hosting.has(script)
          ? names
              .filter((name) => NAMESPACE_DIR.test(name) && !ids.has(name))
              .map((name) => join('cluster', script, name))
          : [join('cluster', script)],
      ),
    ];
    await Promise.all(gone.map((path) => rm(join(dir, path), { recursive: true, force: true })));
    return gone;
  }

  /** The accounts that have Durable Object data on this node. */
  async accounts(): Promise<string[]> {
    return (await entries(this.root)).filter((name) => ACCOUNT_DIR.test(name));
  }
}

/** A directory's entries; none when it does not exist. */
async function entries(dir: string): Promise<string[]> {
  return readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [] as string[];
    throw error;
  });
}
