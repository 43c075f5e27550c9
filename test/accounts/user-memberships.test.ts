import Cloudflare from 'cloudflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLedge, type TestLedge } from '../helpers/ledge.ts';

/** PATCH /user and GET/PUT/DELETE /memberships/{id}, through the official SDK (issue 13 point 7). */
describe('the user profile and memberships through the SDK', () => {
  let ledge: TestLedge;
  let owner: Cloudflare;

  const clientFor = (apiToken: string) => new Cloudflare({ baseURL: ledge.apiUrl, apiToken, maxRetries: 0 });

  /** A second user, member of the test account and of an account of its own. */
  const newMember = async (email: string, options: { status?: 'accepted' | 'pending'; roles?: string[] } = {}) => {
    const accounts = ledge.server.platform.accounts;
    const { user } = await accounts.createUser({ email });
    await accounts.addMember(ledge.accountId, user.id, options.roles, options.status);
    const own = await accounts.createAccount({ name: `${email} account` });
    await accounts.addMember(own.id, user.id);
    const { value } = await accounts.createToken({ userId: user.id, name: 'member' });
    const client = clientFor(value);
    const memberships = [];
    for await (const m of client.memberships.list()) memberships.push(m);
    const membership = memberships.find((m) => m.account?.id === ledge.accountId)!;
    return { client, membership, ownAccount: own.id };
  };

  beforeAll(async () => {
    ledge = await startLedge();
    owner = clientFor(ledge.apiToken);
  });
  afterAll(async () => {
    await ledge.close();
  });

  it('PATCH /user edits the profile fields; absent ones keep their value, null clears', async () => {
    const edited = await owner.user.edit({ first_name: 'Ada', last_name: 'Lovelace', country: 'GB', zipcode: 'N1' });
    expect(edited).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', country: 'GB', zipcode: 'N1' });
    const again = await owner.user.edit({ telephone: '+44 20 0000 0000', zipcode: null });
    expect(again).toMatchObject({ first_name: 'Ada', telephone: '+44 20 0000 0000', zipcode: null });
    expect(await owner.user.get()).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', country: 'GB' });

    await expect(owner.user.edit({ first_name: 'x'.repeat(61) })).rejects.toMatchObject({ status: 400 });
    await expect(owner.user.edit({ telephone: '1'.repeat(21) })).rejects.toMatchObject({ status: 400 });
    // The email is not editable here: an unknown field is refused, not ignored.
    await expect(owner.user.edit({ email: 'new@example.com' } as never)).rejects.toMatchObject({ status: 400 });
    expect((await owner.user.get()).email).toBe(ledge.email);
  });

  it('reads one membership; another user’s is not found', async () => {
    const memberships = [];
    for await (const m of owner.memberships.list()) memberships.push(m);
    const mine = memberships[0]!;
    expect(await owner.memberships.get(mine.id!)).toMatchObject({
      id: mine.id,
      status: 'accepted',
      account: { id: ledge.accountId },
    });
    const { client } = await newMember('reader@example.com');
    await expect(client.memberships.get(mine.id!)).rejects.toMatchObject({ status: 404 });
    await expect(owner.memberships.get('0'.repeat(32))).rejects.toMatchObject({ status: 404 });
  });

  it('an invitation is pending until accepted: only then does the account open', async () => {
    const { client, membership } = await newMember('invited@example.com', { status: 'pending' });
    expect(membership.status).toBe('pending');
    await expect(client.accounts.get({ account_id: ledge.accountId })).rejects.toMatchObject({ status: 403 });

    const accepted = await client.memberships.update(membership.id!, { status: 'accepted' });
    expect(accepted).toMatchObject({ id: membership.id, status: 'accepted' });
    expect(await client.accounts.get({ account_id: ledge.accountId })).toMatchObject({ id: ledge.accountId });
    // Accepting twice is a no-op; rejecting an accepted membership is refused (leaving is DELETE).
    expect(await client.memberships.update(membership.id!, { status: 'accepted' })).toMatchObject({
      status: 'accepted',
    });
    await expect(client.memberships.update(membership.id!, { status: 'rejected' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(client.memberships.update(membership.id!, { status: 'maybe' as never })).rejects.toMatchObject({
      status: 400,
    });
  });

  it('a rejected invitation never opens the account', async () => {
    const { client, membership } = await newMember('declines@example.com', { status: 'pending' });
    expect(await client.memberships.update(membership.id!, { status: 'rejected' })).toMatchObject({
      status: 'rejected',
    });
    await expect(client.memberships.update(membership.id!, { status: 'accepted' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(client.accounts.get({ account_id: ledge.accountId })).rejects.toMatchObject({ status: 403 });
  });

  it('DELETE leaves the account, unless the caller is its last administrator', async () => {
    const { client, membership, ownAccount } = await newMember('leaver@example.com');
    expect(await client.memberships.delete(membership.id!)).toEqual({ id: membership.id });
    await expect(client.accounts.get({ account_id: ledge.accountId })).rejects.toMatchObject({ status: 403 });
    await expect(client.memberships.get(membership.id!)).rejects.toMatchObject({ status: 404 });

    // Alone in its own account, the member cannot leave it.
    const memberships = [];
    for await (const m of client.memberships.list()) memberships.push(m);
    const own = memberships.find((m) => m.account?.id === ownAccount)!;
    const refused = await client.memberships.delete(own.id!).catch((e: { status: number; message: string }) => e);
    expect(refused).toMatchObject({ status: 409 });
    expect((refused as { message: string }).message).toContain('last administrator');
    expect(await client.accounts.get({ account_id: ownAccount })).toMatchObject({ id: ownAccount });
  });
});
