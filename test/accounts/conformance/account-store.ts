import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountStore, OwnerRecords } from '../../../src/accounts/index.ts';
import type { Account, ApiToken, User } from '../../../src/accounts/index.ts';
import { newId } from '../../../src/shared/ids.ts';

export interface AccountStoreFixture {
  store: AccountStore;
  /** The same records through another database handle (a second node on PostgreSQL). */
  secondStore: AccountStore;
  close(): Promise<void>;
}

const iso = (ms = Date.now()) => new Date(ms).toISOString();
const account = (name: string, id = newId()): Account => ({ id, name, type: 'standard', created_on: iso() });
const user = (email: string, ms?: number): User => ({ id: newId(), email, created_on: iso(ms), modified_on: iso(ms) });
const token = (userId: string, accountId: string | null = null): ApiToken => ({
  id: newId(),
  user_id: userId,
  name: 't',
  account_id: accountId,
  read_only: true,
  status: 'active',
  not_before: null,
  expires_on: '2099-01-01T00:00:00.000Z',
  created_on: iso(),
  condition: { request_ip: { in: ['10.0.0.0/8', '2001:db8::/32'], not_in: ['10.1.0.0/16'] } },
});
const membership = (accountId: string, userId: string, roles = ['Administrator'], status = 'accepted') => ({
  id: newId(),
  account_id: accountId,
  user_id: userId,
  roles,
  status,
  created_on: iso(),
});
const owner = (email: string): OwnerRecords => {
  const a = account(`${email}'s Account`);
  const u = user(email);
  return {
    account: a,
    user: u,
    apiKeyHash: 'k'.repeat(64),
    membership: membership(a.id, u.id),
    token: token(u.id),
    tokenHash: newId() + newId(),
  };
};

/** The contract of every AccountStore, with races between two handles (two nodes on PostgreSQL). */
export function accountStoreConformance(name: string, create: () => Promise<AccountStoreFixture>): void {
  describe(`AccountStore conformance: ${name}`, () => {
    let fixture: AccountStoreFixture;
    let store: AccountStore;
    beforeEach(async () => {
      fixture = await create();
      store = fixture.store;
    });
    afterEach(async () => fixture.close());

    it('creates an account once per id, reads and renames it', async () => {
      const a = account('Acme');
      expect(await store.countAccounts()).toBe(0);
      expect(await store.insertAccount(a)).toBe(true);
      expect(await store.insertAccount({ ...a, name: 'Other' })).toBe(false);
      expect(await store.getAccount(a.id)).toEqual(a);
      await store.renameAccount(a.id, 'Acme 2');
      expect((await store.getAccount(a.id))?.name).toBe('Acme 2');
      expect(await store.countAccounts()).toBe(1);
      expect(await store.getAccount(newId())).toBeUndefined();
    });

    it('finds users by e-mail in any case, and refuses a second user with the same address', async () => {
      const u = user('Ada@Example.com');
      expect(await store.insertUser(u, 'hash')).toBe(true);
      expect(await store.insertUser(user('ada@example.COM'), null)).toBe(false);
      expect(await store.getUserByEmail('ADA@example.com')).toMatchObject({ id: u.id, api_key_hash: 'hash' });
      await store.setUserApiKeyHash(u.id, 'hash2');
      expect((await store.getUserByEmail('ada@example.com'))?.api_key_hash).toBe('hash2');
      expect(await store.getUserByEmail('nobody@example.com')).toBeUndefined();
    });

    it('sets the profile fields given and keeps the others', async () => {
      const u = user('p@example.com');
      await store.insertUser(u, null);
      await store.updateUserProfile(u.id, { first_name: 'Ada', country: 'UK' }, '2030-01-01T00:00:00.000Z');
      await store.updateUserProfile(u.id, { last_name: 'Lovelace', country: null }, '2030-01-02T00:00:00.000Z');
      expect(await store.getUserById(u.id)).toEqual({
        ...u,
        first_name: 'Ada',
        last_name: 'Lovelace',
        telephone: null,
        country: null,
        zipcode: null,
        modified_on: '2030-01-02T00:00:00.000Z',
      });
    });

    it('lists memberships by account name, once per account and user', async () => {
      const u = user('m@example.com');
      await store.insertUser(u, null);
      const [b, a] = [account('Beta'), account('Alpha')];
      await store.insertAccount(b);
      await store.insertAccount(a);
      const first = membership(b.id, u.id, ['Administrator']);
      expect(await store.insertMembership(first)).toBe(true);
      expect(await store.insertMembership(membership(a.id, u.id, ['Viewer'], 'pending'))).toBe(true);
      expect(await store.insertMembership(membership(b.id, u.id))).toBe(false);
      const listed = await store.listMemberships(u.id);
      expect(listed.map((m) => [m.account.name, m.roles, m.status])).toEqual([
        ['Alpha', ['Viewer'], 'pending'],
        ['Beta', ['Administrator'], 'accepted'],
      ]);
      await store.setMembershipStatus(listed[0]!.id, 'accepted');
      expect((await store.getMembership(listed[0]!.id))?.status).toBe('accepted');
      expect(await store.getMembership(first.id)).toMatchObject({
        account: { id: b.id, name: 'Beta', type: 'standard' },
      });
      expect(await store.firstMembership()).toEqual({ email: u.email, account_id: expect.any(String) });
    });

    it("keeps an account's last accepted administrator", async () => {
      const a = account('Solo');
      const [u1, u2] = [user('one@example.com'), user('two@example.com')];
      await store.insertAccount(a);
      for (const u of [u1, u2]) await store.insertUser(u, null);
      const admin = membership(a.id, u1.id);
      const viewer = membership(a.id, u2.id, ['Viewer']);
      await store.insertMembership(admin);
      await store.insertMembership(viewer);
      expect(await store.deleteMembershipUnlessLastAdmin(admin.id)).toBe('last_admin');
      expect(await store.deleteMembershipUnlessLastAdmin(viewer.id)).toBe('deleted');
      expect(await store.deleteMembershipUnlessLastAdmin(viewer.id)).toBe('missing');
      expect(await store.getMembership(admin.id)).toBeDefined();
    });

    it('stores tokens by hash only, with their flags', async () => {
      const u = user('t@example.com');
      const a = account('Tokens');
      await store.insertUser(u, null);
      await store.insertAccount(a);
      const t = token(u.id, a.id);
      await store.insertToken(t, 'h'.repeat(64));
      expect(await store.getTokenByHash('h'.repeat(64))).toEqual({ ...t, token_hash: 'h'.repeat(64) });
      expect(await store.getTokenByHash('x'.repeat(64))).toBeUndefined();
      expect(await store.getTokenById(t.id)).toEqual({ ...t, token_hash: 'h'.repeat(64) });
      expect(await store.getTokenById('n'.repeat(32))).toBeUndefined();
    });

    it('writes the first owner in one piece, only into an empty database', async () => {
      const first = owner('owner@example.com');
      expect(await store.insertOwnerIfEmpty(first)).toBe(true);
      expect(await store.insertOwnerIfEmpty(owner('late@example.com'))).toBe(false);
      expect(await store.countAccounts()).toBe(1);
      expect(await store.getUserByEmail('late@example.com')).toBeUndefined();
      expect(await store.getTokenByHash(first.tokenHash)).toMatchObject({ user_id: first.user.id });
      expect(await store.firstMembership()).toEqual({ email: 'owner@example.com', account_id: first.account.id });
    });

    it('leaves no half-made owner when one of its rows is refused', async () => {
      const bad = owner('half@example.com');
      // A membership naming a user that does not exist: refused by its foreign key, after the account row.
      bad.membership = membership(bad.account.id, newId());
      await expect(store.insertOwnerIfEmpty(bad)).rejects.toThrow();
      expect(await store.countAccounts()).toBe(0);
      expect(await store.getUserByEmail('half@example.com')).toBeUndefined();
    });

    it('bootstraps once when two nodes start together', async () => {
      const results = await Promise.all([
        store.insertOwnerIfEmpty(owner('a@example.com')),
        fixture.secondStore.insertOwnerIfEmpty(owner('b@example.com')),
      ]);
      expect(results.sort()).toEqual([false, true]);
      expect(await store.countAccounts()).toBe(1);
    });

    it('lets one of two creators of one e-mail address or account id win', async () => {
      for (let round = 0; round < 6; round++) {
        const users = await Promise.all([
          store.insertUser(user(`race${round}@example.com`), null),
          fixture.secondStore.insertUser(user(`RACE${round}@example.com`), null),
        ]);
        expect(users.sort()).toEqual([false, true]);
        const a = account('Same');
        const accounts = await Promise.all([store.insertAccount(a), fixture.secondStore.insertAccount({ ...a })]);
        expect(accounts.sort()).toEqual([false, true]);
      }
    });

    it('keeps one administrator when the last two leave at once', async () => {
      for (let round = 0; round < 6; round++) {
        const a = account(`Pair ${round}`);
        await store.insertAccount(a);
        const ids: string[] = [];
        for (const n of [1, 2]) {
          const u = user(`admin${n}-${round}@example.com`);
          await store.insertUser(u, null);
          const m = membership(a.id, u.id);
          await store.insertMembership(m);
          ids.push(m.id);
        }
        const outcomes = await Promise.all([
          store.deleteMembershipUnlessLastAdmin(ids[0]!),
          fixture.secondStore.deleteMembershipUnlessLastAdmin(ids[1]!),
        ]);
        expect(outcomes.sort()).toEqual(['deleted', 'last_admin']);
      }
    });
  });
}
