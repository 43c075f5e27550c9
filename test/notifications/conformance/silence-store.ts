import { expect, it } from 'vitest';
import { SqlNotificationStore } from '../../../src/notifications/store.ts';
import { SqlSilenceStore, type Silence } from '../../../src/notifications/silence-store.ts';
import { newId } from '../../../src/shared/ids.ts';
import { ACCOUNT, OTHER_ACCOUNT } from '../../helpers/store-database.ts';
import type { StoreContext } from './context.ts';

/** SqlSilenceStore on every backend: windows kept exactly, per account, gone with their policy. */
export function silenceStoreCases(context: StoreContext): void {
  const policyFor = async (account: string) => {
    const id = newId();
    const now = new Date().toISOString();
    await new SqlNotificationStore(context.db()).insertPolicy({
      id,
      account_id: account,
      name: 'p',
      description: '',
      enabled: true,
      alert_type: 'load_balancing_health_alert',
      mechanisms: { webhooks: [] },
      filters: {},
      alert_interval: null,
      created: now,
      modified: now,
    });
    return id;
  };
  const silence = (account: string, policy: string, start: number, end: number): Silence => ({
    id: newId(),
    account_id: account,
    policy_id: policy,
    start_ms: start,
    end_ms: end,
    created_at: '2026-11-26T10:00:00.000Z',
    updated_at: '2026-11-26T10:00:00.000Z',
  });

  it('stores, lists in start order, updates, deletes per account; epoch ms beyond 2^31 kept exactly', async () => {
    const store = new SqlSilenceStore(context.db());
    const policy = await policyFor(ACCOUNT);
    const late = silence(ACCOUNT, policy, 1_800_000_000_000, 1_800_000_360_000);
    const early = silence(ACCOUNT, policy, 1_700_000_000_000, 1_700_000_360_000);
    await context.db().transaction(async (tx) => {
      await store.insert(late, tx);
      await store.insert(early, tx);
    });
    expect((await store.list(ACCOUNT)).map((s) => s.id)).toEqual([early.id, late.id]);
    expect(await store.get(ACCOUNT, late.id)).toEqual(late);
    expect(await store.get(OTHER_ACCOUNT, late.id)).toBeUndefined();
    expect(await store.update(OTHER_ACCOUNT, late.id, { start_ms: 1, end_ms: 2, updated_at: 'x' })).toBe(false);
    expect(
      await store.update(ACCOUNT, late.id, { start_ms: 1_800_000_000_001, end_ms: 1_800_000_999_999, updated_at: 'u' }),
    ).toBe(true);
    expect(await store.get(ACCOUNT, late.id)).toMatchObject({ start_ms: 1_800_000_000_001, end_ms: 1_800_000_999_999 });
    expect((await store.notOverAt(1_750_000_000_000)).map((s) => s.id)).toEqual([late.id]);
    expect(await store.delete(OTHER_ACCOUNT, early.id)).toBe(false);
    expect(await store.delete(ACCOUNT, early.id)).toBe(true);
    expect((await store.list(ACCOUNT)).map((s) => s.id)).toEqual([late.id]);
  });

  it('a rolled-back transaction leaves no silence, and deleting the policy deletes its silences', async () => {
    const store = new SqlSilenceStore(context.db());
    const policy = await policyFor(ACCOUNT);
    await expect(
      context.db().transaction(async (tx) => {
        await store.insert(silence(ACCOUNT, policy, 1, 2), tx);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    expect(await store.list(ACCOUNT)).toEqual([]);
    await store.insert(silence(ACCOUNT, policy, 1, 2));
    await new SqlNotificationStore(context.db()).deletePolicy(ACCOUNT, policy);
    expect(await store.list(ACCOUNT)).toEqual([]);
  });
}
