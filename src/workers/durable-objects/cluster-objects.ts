import { createHash, createHmac } from 'node:crypto';
import type { StorageService } from '../../storage/index.ts';

/** Where the cluster store is: its owner and bucket in Ledge's own storage engine (s3/cluster-store.ts). */
export interface ClusterStorePlace {
  storage: StorageService;
  accountId: string;
  bucket: string;
}

/** `<object id>/own.json` under a namespace's directory: the object's owner record, one per object ever run. */
const OWNER_RECORD = /^([0-9a-f]{64})\/own\.json$/;
const LIST_PAGE = 1000;

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
    const { storage } = this.#place;
    const bucket = await storage.getBucket(this.#place.accountId, this.#place.bucket);
    if (!bucket) return [];
    const prefix = `engines/${accountId}/scripts/${scriptName}/v1/do/`;
    const key = createHash('sha256').update(namespaceId).digest();
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await storage.list(bucket, { prefix, cursor, limit: LIST_PAGE });
      for (const object of page.objects) {
        const rest = object.key.slice(prefix.length);
        const slash = rest.indexOf('/');
        const id = OWNER_RECORD.exec(rest.slice(slash + 1))?.[1];
        if (slash > 0 && id !== undefined && belongsTo(id, key)) ids.push(id);
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor !== undefined);
    return ids.sort();
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
