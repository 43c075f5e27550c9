import { mkdirSync } from 'node:fs';
import type { ScriptToRun } from './script.ts';
import { capnpList, capnpString } from './capnp.ts';
import { scriptFlagDir } from './tail-traces.ts';
import { localBlobsBinding, localBucketBinding, TAIL_FLAG_BINDING } from './isolate/contract.ts';
import type { R2ServiceResolver, WorkerdR2Service } from './config.ts';
import type { LocalCache } from './isolate/contract.ts';

export interface HiddenBindings {
  /** Binding entries for the script's worker. */
  bindings: string[];
  /** Services they name, by service name (shared between scripts that name the same one). */
  services: Map<string, string>;
  /** For the local body module (isolate/local-body.ts): each bucket binding of the user's that reads bodies locally, and its slot. */
  localBuckets: Record<string, number>;
  /** The reserved metadata key the local read path is told the file under (undefined: no local reads). */
  localBodyKey: string | undefined;
  /** Set when small objects may be cached in the isolate (isolate/r2-cache.ts): the server's mark, each slot's bucket. */
  localCache: LocalCache | undefined;
}

/**
 * The bindings the platform gives a script besides the user's, each reaching only what that script
 * needs (least privilege: a tenant's code must not reach another's flag or bytes):
 * - its own tail flag: a read-only disk service rooted at `<flags>/<account>/<script>/`, made here,
 *   so nothing it can reach names or reads another script's flag;
 * - per bucket it is bound to, when that bucket's blobs are files here: a hidden r2Bucket binding (the
 *   wire backend answers its large gets with a file name, see R2WireBackend.localReads) and a read-only
 *   disk service on that bucket's blob directory alone, not the account's, nor other buckets'.
 */
export function hiddenBindings(
  deployed: ScriptToRun,
  input: { r2: R2ServiceResolver; tailFlagsDir: string },
): HiddenBindings {
  const { script, version } = deployed;
  const account = script.account_id;
  const services = new Map<string, string>();
  const flagDir = scriptFlagDir(input.tailFlagsDir, account, script.name);
  mkdirSync(flagDir, { recursive: true, mode: 0o700 });
  const flagService = `ledge-tail-flags:${account}/${script.name}`;
  services.set(flagService, diskService(flagService, flagDir));
  const bindings = [`(name = ${capnpString(TAIL_FLAG_BINDING)}, service = ${capnpString(flagService)})`];

  const localBuckets: Record<string, number> = {};
  const slots = new Map<string, number>();
  let localBodyKey: string | undefined;
  let localCache: LocalCache | undefined;
  for (const binding of version.bindings) {
    if (binding.type !== 'r2_bucket') continue;
    let slot = slots.get(binding.bucket_name);
    if (slot === undefined) {
      const reads = input.r2.localReads?.(account, binding.bucket_name);
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
      services.set(r2Service, externalService(r2Service, reads.service));
      services.set(blobService, diskService(blobService, reads.directory));
      bindings.push(
        `(name = ${capnpString(localBucketBinding(slot))}, r2Bucket = ${capnpString(r2Service)})`,
        `(name = ${capnpString(localBlobsBinding(slot))}, service = ${capnpString(blobService)})`,
      );
    }
    localBuckets[binding.name] = slot;
  }
  return { bindings, services, localBuckets, localBodyKey, localCache };
}

function diskService(name: string, path: string): string {
  return `(name = ${capnpString(name)}, disk = (path = ${capnpString(path)}, writable = false))`;
}

export function externalService(name: string, target: WorkerdR2Service): string {
  const headers = target.injectRequestHeaders.map(
    (h) => `(name = ${capnpString(h.name)}, value = ${capnpString(h.value)})`,
  );
  return `(name = ${capnpString(name)}, external = (address = ${capnpString(target.address)}, http = (injectRequestHeaders = ${capnpList(headers)})))`;
}
