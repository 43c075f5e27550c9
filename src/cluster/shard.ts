import { createHash } from 'node:crypto';

/**
 * Which live node owns `key` (an origin to probe): rendezvous hashing, the node with the highest hash of
 * (node, key). Every node computes the same owner from the same live set, and when a node joins or leaves
 * only the keys it owned (or now owns) move; the rest stay where they were.
 */
export function shardOwner(key: string, liveNodes: readonly string[]): string | undefined {
  let owner: string | undefined;
  let best = -1n;
  for (const node of liveNodes) {
    const weight = createHash('sha256').update(node).update('\0').update(key).digest().readBigUInt64BE(0);
    if (weight > best || (weight === best && owner !== undefined && node < owner)) {
      best = weight;
      owner = node;
    }
  }
  return owner;
}
