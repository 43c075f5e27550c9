import { createHash, createHmac } from 'node:crypto';
import type { BucketRecord, StorageService } from '../../storage/index.ts';

/** Where the cluster store is: its owner and bucket in Ledge's own storage engine (s3/cluster-store.ts). */
export interface ClusterStorePlace {
  storage: StorageService;
  accountId: string;
  bucket: string;
}

/** An object's directory under its namespace's: its id, 64 hex digits. */
const OBJECT_ID = /^[0-9a-f]{64}$/;
const LIST_PAGE = 1000;
/** R2's most keys deleted in one call. */
const DELETE_BATCH = 1000;

/**
 * The objects of a class whose script runs in workerd's cluster mode, read from the cluster store rather than
 * this node's working copy, so every node lists the objects any node has run. Each script's cluster keeps, under
 * `engines/<account>/scripts/<script>/v1/do/<namespace dir>/<object id>/`, an object's owner record (`own.json`)
 * and its commits. The directory's name is not the namespace id, so an object is the class's when its id
 * verifies under the class's id key as workerd derives it (`ActorIdFactoryImpl`: the id's last 16 bytes are an
 * HMAC-SHA256 of its first 16, keyed with SHA-256 of the namespace's `uniqueKey`, here its namespace id): another
 * class's or a Workflow's objects in the same cluster never match. Only the account's own prefix is read.
 */
export class ClusterObjects {
  readonly #place: ClusterStorePlace;

  constructor(place: ClusterStorePlace) {
    this.#place = place;
  }

  /** The class's object ids, sorted, every page read (an owner record per object: a list of keys, no bodies). */
  async ids(accountId: string, scriptName: string, namespaceId: string): Promise<string[]> {
    const ids: string[] = [];
    const bucket = await this.#bucket();
    if (!bucket) return ids;
    await this.#walk(bucket, accountId, scriptName, namespaceId, (_key, id, rest) => {
      if (rest === 'own.json') ids.push(id);
    });
    return ids.sort();
  }

  /**
   * Deletes everything the cluster store holds for the class's objects (owner records and commits): a deleted
   * class's data, as its directory goes on one node. Run once no instance hosts the class any more.
   */
  async remove(accountId: string, scriptName: string, namespaceId: string): Promise<number> {
    const bucket = await this.#bucket();
    if (!bucket) return 0;
    const keys: string[] = [];
    await this.#walk(bucket, accountId, scriptName, namespaceId, (key) => keys.push(key));
    for (let i = 0; i < keys.length; i += DELETE_BATCH)
      await this.#place.storage.objects.delete(bucket, keys.slice(i, i + DELETE_BATCH));
    return keys.length;
  }

  #bucket() {
    return this.#place.storage.getBucket(this.#place.accountId, this.#place.bucket);
  }

  /** Calls `each` for every key of the class's objects: `<dir>/<id>/<rest>` with an id of the class. */
  async #walk(
    bucket: BucketRecord,
    accountId: string,
    scriptName: string,
    namespaceId: string,
    each: (key: string, id: string, rest: string) => void,
  ): Promise<void> {
    const { storage } = this.#place;
    const prefix = `engines/${accountId}/scripts/${scriptName}/v1/do/`;
    const idKey = createHash('sha256').update(namespaceId).digest();
    let cursor: string | undefined;
    do {
      const page = await storage.list(bucket, { prefix, cursor, limit: LIST_PAGE });
      for (const object of page.objects) {
        const [dir, id, ...rest] = object.key.slice(prefix.length).split('/');
        if (dir && id && OBJECT_ID.test(id) && rest.length > 0 && belongsTo(id, idKey))
          each(object.key, id, rest.join('/'));
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor !== undefined);
  }

  /** A page of the class's objects after `cursor` (an object id), as the single-node listing gives it. */
  async list(
    accountId: string,
    scriptName: string,
    namespaceId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<{ ids: string[]; cursor: string | undefined }> {
    const all = await this.ids(accountId, scriptName, namespaceId);
    const after = all.filter((id) => page.cursor === undefined || id > page.cursor);
    const shown = after.slice(0, page.limit);
    return { ids: shown, cursor: after.length > page.limit ? shown.at(-1) : undefined };
  }
}

function belongsTo(id: string, key: Buffer): boolean {
  const mac = createHmac('sha256', key)
    .update(Buffer.from(id.slice(0, 32), 'hex'))
    .digest('hex');
  return mac.slice(0, 32) === id.slice(32);
}
