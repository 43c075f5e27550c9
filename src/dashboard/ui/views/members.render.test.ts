// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { Member, Membership, Role } from '../../../client/index.ts';
import { state } from '../state.ts';
import { renderMembers } from './members.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

const roles = [
  { id: 'r-admin', name: 'Administrator', description: '' },
  { id: 'r-member', name: 'Member', description: '' },
] as Role[];
const member = { id: 'm1', email: 'teammate@example.com', status: 'accepted', roles: [roles[1]!] } as Member;
const invitation = {
  id: 'ms1',
  status: 'pending',
  account: { id: 'acc2', name: 'Other' },
  roles: ['Member'],
} as Membership;
const actions = () => ({
  invite: vi.fn(async () => undefined),
  saveRole: vi.fn(async () => undefined),
  remove: vi.fn(async () => undefined),
  accept: vi.fn(async () => undefined),
});

describe('the Members page, drawn from its data', () => {
  it("lists members with their role chosen, the user's memberships, and what the last change did", () => {
    signedInAs(state, {});
    const view = renderMembers(
      { own: [invitation], members: [member], roles, readOnly: false, message: 'Added a@example.com (pending).' },
      actions(),
    );
    expect(labelled<HTMLSelectElement>(view, 'Role of teammate@example.com').value).toBe('r-member');
    expect(cellTexts([view]).map((row) => row.slice(0, 2))).toEqual([
      ['teammate@example.com', 'accepted'],
      ['Other', 'acc2'],
    ]);
    expect(view.querySelector('[role=status]')!.textContent).toBe('Added a@example.com (pending).');
  });

  it('invites with the chosen role, "Member" by default', () => {
    signedInAs(state, {});
    const act = actions();
    const view = renderMembers({ own: [], members: [], roles, readOnly: false }, act);
    labelled(view, 'Email').value = 'new@example.com';
    submit(view);
    expect(act.invite).toHaveBeenCalledWith({ email: 'new@example.com', role: 'r-member' });
  });

  it('a read-only token cannot change a role', () => {
    signedInAs(state, { read_only: true });
    const view = renderMembers({ own: [], members: [member], roles, readOnly: true }, actions());
    expect(labelled<HTMLSelectElement>(view, 'Role of teammate@example.com').disabled).toBe(true);
  });
});
