/**
 * The selection primitives every steering policy is built from. Weights of 0 are never picked;
 * `random` is injectable so tests can check distributions without flakiness.
 */
export type Random = () => number;

/** One item with probability weight / sum of weights. */
export function pickWeighted<T>(items: readonly T[], weight: (item: T) => number, random: Random): T | undefined {
  let total = 0;
  for (const item of items) total += Math.max(0, weight(item));
  if (total <= 0) return undefined;
  let point = random() * total;
  for (const item of items) {
    point -= Math.max(0, weight(item));
    if (point < 0) return item;
  }
  return items.findLast((item) => weight(item) > 0);
}

/**
 * The item with the smallest load per unit of weight ((load + 1) / weight, so idle servers still
 * differ by weight); ties are broken at random so equal servers share the load.
 */
export function pickLeastLoaded<T>(
  items: readonly T[],
  load: (item: T) => number,
  weight: (item: T) => number,
  random: Random,
): T | undefined {
  let best: T | undefined;
  let bestScore = Infinity;
  let ties = 0;
  for (const item of items) {
    const w = weight(item);
    if (w <= 0) continue;
    const score = (load(item) + 1) / w;
    if (score < bestScore) {
      best = item;
      bestScore = score;
      ties = 1;
    } else if (score === bestScore && random() * ++ties < 1) {
      best = item; // reservoir sampling: each tied item is kept with probability 1/ties
    }
  }
  return best;
}

/**
 * Rendezvous (highest random weight) hashing: the same key picks the same item while it is in the list,
 * and removing an item moves only the keys that were on it. Weights scale each item's share.
 */
export function pickByHash<T>(
  items: readonly T[],
  key: string,
  id: (item: T) => string,
  weight: (item: T) => number,
): T | undefined {
  let best: T | undefined;
  let bestScore = -Infinity;
  for (const item of items) {
    const w = weight(item);
    if (w <= 0) continue;
    // Uniform in (0, 1) from the hash; -w / ln(u) gives each item a share proportional to its weight.
    const u = (fnv1a(`${key}\u0000${id(item)}`) + 1) / 4_294_967_297;
    const score = -w / Math.log(u);
    if (score > bestScore) {
      best = item;
      bestScore = score;
    }
  }
  return best;
}

/** 32-bit FNV-1a with a final avalanche (murmur3's fmix32), enough to spread client addresses. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
