import type { MigrationApi, PoolSummary } from './api.ts';

export interface PageOfPools {
  page: number;
  pools: PoolSummary[];
}

/**
 * Walks the pool list (in the API's order, by name) page by page. The walk ends at an empty page or at
 * the last page as counted when it started: while pools are being added it would otherwise chase a
 * list that keeps growing. Pools pushed past that page are found by the next walk.
 */
export async function* poolPages(api: MigrationApi, perPage: number): AsyncGenerator<PageOfPools> {
  let lastPage: number | undefined;
  for (let page = 1; ; page++) {
    const { items, totalPages } = await api.listPools(page, perPage);
    if (items.length === 0) return;
    lastPage ??= totalPages;
    yield { page, pools: items };
    if (lastPage !== undefined && page >= lastPage) return;
  }
}

export interface Scan {
  pools: number;
  legacy: PoolSummary[];
  /** Pages (at this page size) that hold at least one legacy email. */
  legacyPages: number[];
}

export async function scanPools(api: MigrationApi, perPage: number): Promise<Scan> {
  const scan: Scan = { pools: 0, legacy: [], legacyPages: [] };
  for await (const { page, pools } of poolPages(api, perPage)) {
    scan.pools += pools.length;
    const legacy = pools.filter((pool) => pool.notification_email !== '');
    if (legacy.length > 0) scan.legacyPages.push(page);
    scan.legacy.push(...legacy);
  }
  return scan;
}
