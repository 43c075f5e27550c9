import type { Member, Membership, Role } from '../../../client/index.ts';
import { field, h, table } from '../dom.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';
import { select } from './tokens.render.ts';

/** The Members page drawn from its data; access.ts loads and saves through the client. */

export interface MembersData {
  own: Membership[];
  members: Member[];
  roles: Role[];
  readOnly: boolean;
  /** What the last change did, said on the reloaded page. */
  message?: string | undefined;
}

export interface MemberActions {
  invite(input: { email: string; role: string }): Promise<unknown>;
  saveRole(member: Member, roleId: string): Promise<unknown>;
  remove(member: Member): Promise<unknown>;
  accept(membership: Membership): Promise<unknown>;
}

/**
 * Members: the signed-in user's own memberships (an invitation accepted here), and the members of the account on
 * screen: invite by e-mail with a role, change a member's role, remove one (with confirmation). Only an
 * Administrator of the account may change members; the API refuses anyone else, and the last administrator.
 */
export function renderMembers(data: MembersData, actions: MemberActions): HTMLElement {
  const status = notice();
  if (data.message) status.ok(data.message);
  const roleOptions = data.roles.map((r) => ({ value: r.id, text: r.name }));
  const email = field('Email', { type: 'email', required: true, autocomplete: 'off' });
  const role = select('Role', roleOptions, data.roles.find((r) => r.name === 'Member')?.id);
  // Always an invitation: the user accepts it themselves (never a membership without their consent).
  const form = h('form', { class: 'card' }, email.row, role.row, h('button', { type: 'submit' }, 'Invite member'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions
      .invite({ email: email.input.value, role: role.element.value })
      .catch((error: unknown) => status.fail(error));
  });
  const rows = data.members.map((m) => {
    const choice = select(`Role of ${m.email}`, roleOptions, m.roles[0]?.id, true);
    if (data.readOnly) choice.element.disabled = true;
    return [
      h('span', { class: 'name' }, m.email),
      m.status,
      choice.row,
      h(
        'span',
        { class: 'actions' },
        writeButton(
          'Save role',
          () =>
            void actions.saveRole(m, choice.element.value).then(
              () => status.ok(`${m.email} is now ${choice.element.selectedOptions[0]?.text ?? ''}.`),
              (error: unknown) => status.fail(error),
            ),
          { 'aria-label': `Save role of ${m.email}` },
        ),
        writeButton(
          'Remove',
          async () => {
            if (!(await confirmDialog(`Remove ${m.email} from this account?`, 'Remove member'))) return;
            actions.remove(m).catch((error: unknown) => status.fail(error));
          },
          { 'aria-label': `Remove ${m.email}` },
        ),
      ),
    ];
  });
  return pageView(
    'Members',
    status.element,
    table(`Members of this account (${data.members.length})`, ['Email', 'Status', 'Role', 'Actions'], rows),
    h('h2', null, 'Invite a member'),
    guardForm(form),
    h('h2', null, 'Your memberships'),
    table(
      'Memberships',
      ['Account', 'Account ID', 'Status', 'Roles', 'Actions'],
      data.own.map((m) => [
        m.account.name,
        h('code', null, m.account.id),
        m.status,
        (m.roles ?? []).join(', '),
        m.status === 'pending'
          ? writeButton('Accept', () => void actions.accept(m).catch((error: unknown) => status.fail(error)), {
              'aria-label': `Accept the invitation to ${m.account.name}`,
            })
          : '',
      ]),
      'No memberships.',
      true,
    ),
  );
}
