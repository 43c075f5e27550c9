import { localBlobsBinding, localBucketBinding, type LocalCache } from '../../isolate/contract.ts';
import { diskService, externalHttpService } from '../services.ts';
import type { Contribution, PlatformBindingModule } from './contract.ts';

/**
 * Per bucket the script is bound to whose blobs are files here (isolate/local-body.ts): a hidden r2Bucket
 * binding, whose large gets the wire backend answers with a file name (R2WireBackend.localReads), and a
 * read-only disk service on that bucket's blob directory alone, not the account's nor other buckets'. Each
 * such bucket gets a slot; the params tell the isolate which user binding reads through which slot, and
 * which slots' objects it may cache (isolate/r2-cache.ts).
 */
export const localReads: PlatformBindingModule = ({ deployed, r2 }) => {
  const account = deployed.script.account_id;
  const out: Required<Pick<Contribution, 'bindings' | 'services'>> = { bindings: [], services: [] };
  const localBuckets: Record<string, number> = {};
  const slots = new Map<string, number>();
  let localBodyKey: string | undefined;
  let localCache: LocalCache | undefined;
  for (const binding of deployed.version.bindings) {
    if (binding.type !== 'r2_bucket') continue;
    let slot = slots.get(binding.bucket_name);
    if (slot === undefined) {
      const reads = r2.localReads?.(account, binding.bucket_name);
      if (!reads) continue;
      slot = slots.size;
      slots.set(binding.bucket_name, slot);
      localBodyKey = reads.metadataKey;
      if (reads.cacheableKey !== undefined) {
        localCache ??= { metadataKey: reads.cacheableKey, buckets: {} };
        localCache.buckets[slot] = `${account}/${binding.bucket_name}`;
      }
      const r2Service = `ledge-r2-local:${account}/${binding.bucket_name}`;
      const blobService = `ledge-blobs:${account}/${binding.bucket_name}`;
      out.services.push(externalHttpService(r2Service, reads.service), diskService(blobService, reads.directory));
      out.bindings.push(
        { name: localBucketBinding(slot), r2Bucket: r2Service },
        { name: localBlobsBinding(slot), service: blobService },
      );
    }
    localBuckets[binding.name] = slot;
  }
  return { ...out, params: { localBuckets, localBodyKey, localCache } };
};
