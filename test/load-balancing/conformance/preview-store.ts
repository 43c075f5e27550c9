import { expect, it } from 'vitest';
import type { DialectName } from '../../../src/db/index.ts';
import { SqlPreviewStore } from '../../../src/load-balancing/health/preview-store.ts';
import { newId } from '../../../src/shared/ids.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import type { StoreContext } from './fixtures.ts';

/** PreviewStore: a finished preview is read back by its account only, from any node. */
export function previewStoreCases(_backend: DialectName, context: StoreContext): void {
  it('keeps a preview result under its id for its account, and shows it on another node', async () => {
    const store = new SqlPreviewStore(context.db());
    const id = newId();
    const result = JSON.stringify({ 'pool-1': { healthy: true, origins: [{ '192.0.2.1': { healthy: true } }] } });
    await store.save(ACCOUNT, id, result, '2026-01-01T00:00:00.000Z');
    expect(await store.get(ACCOUNT, id)).toBe(result);
    expect(await new SqlPreviewStore(context.reopen()).get(ACCOUNT, id)).toBe(result);
    expect(await store.get(OTHER_ACCOUNT, id)).toBeUndefined();
    expect(await store.get(ACCOUNT, newId())).toBeUndefined();
  });
}
