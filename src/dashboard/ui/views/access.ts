import { acct, state } from '../state.ts';
import { del, enc, get, put, post } from '../api.ts';
import { field, formatTime, h, replace, table, uid } from '../dom.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';

interface Membership {
  id: string;
  status: string;
  account: { id: string; name: string };
  roles?: string[];
}
interface Role {
  id: string;
  name: string;
  description: string;
}
interface Member {
  id: string;
  email: string;
  status: string;
  roles: Role[];
}
interface Token {
  id: string;
  name: string;
  status: string;
  issued_on: string;
  expires_on?: string;
  policies: { permission_groups: { id: string; name: string }[]; resources: Record<string, string> }[];
}

const EDIT_GROUP = 'c8fed203ed3043cba015a93ad1616f1f';
const READ_GROUP = '82e64a83756745bbbb1c9c2701bf816b';

/** A labelled select (the label is its accessible name; `quiet`: read by screen readers only, as in a table row). */
function select(label: string, options: { value: string; text: string }[], value?: string, quiet = false) {
  const id = uid();
  const element = h(
    'select',
    { id },
    options.map((o) => h('option', { value: o.value, selected: o.value === value }, o.text)),
  );
  const caption = h('label', { for: id, class: quiet ? 'sr-only' : undefined }, label);
  return { row: h('div', { class: quiet ? 'field inline' : 'field' }, caption, element), element };
}

/**
 * Members: the signed-in user's own memberships (an invitation accepted here), and the members of the account on
 * screen: invite by e-mail with a role, change a member's role, remove one (with confirmation). Only an
 * Administrator of the account may change members; the API refuses anyone else, and the last administrator.
 */
export async function members(main: HTMLElement): Promise<void> {
  const [own, list, roles] = await Promise.all([
    get<Membership[]>('/memberships', { per_page: 50 }),
    get<Member[]>(`${acct()}/members`, { per_page: 50 }),
    get<Role[]>(`${acct()}/roles`),
  ]);
  const status = notice();
  const again = () => void members(main);
  const roleOptions = roles.map((r) => ({ value: r.id, text: r.name }));
  const email = field('Email', { type: 'email', required: true, autocomplete: 'off' });
  const role = select('Role', roleOptions, roles.find((r) => r.name === 'Member')?.id);
  const form = h('form', { class: 'card' }, email.row, role.row, h('button', { type: 'submit' }, 'Invite member'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post<Member>(`${acct()}/members`, {
      email: email.input.value,
      roles: [role.element.value],
    }).then(
      (member) => {
        again();
        status.ok(`Added ${member.email} (${member.status}).`);
      },
      (error: unknown) => status.fail(error),
    );
  });
  const rows = list.map((m) => {
    const choice = select(`Role of ${m.email}`, roleOptions, m.roles[0]?.id, true);
    if (!state.session || state.session.read_only) choice.element.disabled = true;
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
            void put(`${acct()}/members/${enc(m.id)}`, { roles: [{ id: choice.element.value }] }).then(
              () => status.ok(`${m.email} is now ${choice.element.selectedOptions[0]?.text ?? ''}.`),
              (error: unknown) => status.fail(error),
            ),
          { 'aria-label': `Save role of ${m.email}` },
        ),
        writeButton(
          'Remove',
          async () => {
            if (!(await confirmDialog(`Remove ${m.email} from this account?`, 'Remove member'))) return;
            del(`${acct()}/members/${enc(m.id)}`).then(again, (error: unknown) => status.fail(error));
          },
          { 'aria-label': `Remove ${m.email}` },
        ),
      ),
    ];
  });
  replace(
    main,
    pageView(
      'Members',
      status.element,
      table(`Members of this account (${list.length})`, ['Email', 'Status', 'Role', 'Actions'], rows),
      h('h2', null, 'Invite a member'),
      guardForm(form),
      h('h2', null, 'Your memberships'),
      table(
        'Memberships',
        ['Account', 'Account ID', 'Status', 'Roles', 'Actions'],
        own.map((m) => [
          m.account.name,
          h('code', null, m.account.id),
          m.status,
          (m.roles ?? []).join(', '),
          m.status === 'pending'
            ? writeButton(
                'Accept',
                () =>
                  void put(`/memberships/${enc(m.id)}`, { status: 'accepted' }).then(again, (error: unknown) =>
                    status.fail(error),
                  ),
                { 'aria-label': `Accept the invitation to ${m.account.name}` },
              )
            : '',
        ]),
      ),
    ),
  );
}

/**
 * API Tokens: the user's tokens (within this session's own token's reach), a new token (its value shown once, here,
 * never again), a token's value rolled (the old one stops at once) and a token deleted, each with confirmation.
 */
export async function tokens(main: HTMLElement, reveal?: { name: string; value: string }): Promise<void> {
  const [list, current] = await Promise.all([
    get<Token[]>('/user/tokens', { per_page: 50 }),
    state.session?.via === 'api_token' ? get<{ id: string }>('/user/tokens/verify') : Promise.resolve(undefined),
  ]);
  const status = notice();
  // The one place a token's value is ever shown: after it is made or rolled, until the page changes.
  const shown = h('div', { class: 'card secret', hidden: true });
  const showValue = (name: string, value: string) => {
    const id = uid();
    shown.hidden = false;
    replace(
      shown,
      h('p', { role: 'status' }, `The value of "${name}". Copy it now: it is not shown again.`),
      h('label', { for: id }, 'Token value'),
      h('input', { id, readonly: true, value, class: 'wide', autocomplete: 'off', spellcheck: 'false' }),
    );
  };
  const again = (shownNext?: { name: string; value: string }) => tokens(main, shownNext);
  const name = field('Token name', { required: true });
  const access = select('Access', [
    { value: EDIT_GROUP, text: 'Read and write' },
    { value: READ_GROUP, text: 'Read only' },
  ]);
  const scope = select('Accounts', [
    { value: state.accountId, text: 'This account only' },
    { value: '*', text: 'All my accounts' },
  ]);
  const form = h(
    'form',
    { class: 'card' },
    name.row,
    access.row,
    scope.row,
    h('button', { type: 'submit' }, 'Create token'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post<Token & { value: string }>('/user/tokens', {
      name: name.input.value,
      policies: [
        {
          effect: 'allow',
          permission_groups: [{ id: access.element.value }],
          resources: { [`com.cloudflare.api.account.${scope.element.value}`]: '*' },
        },
      ],
    }).then(
      (token) => void again({ name: token.name, value: token.value }),
      (error: unknown) => status.fail(error),
    );
  });
  const rows = list.map((t) => {
    const policy = t.policies[0];
    const resource = Object.keys(policy?.resources ?? {})[0] ?? '';
    const account = resource.replace('com.cloudflare.api.account.', '');
    const mine = t.id === current?.id;
    const warning = mine ? ' This session signed in with it: you will be signed out.' : '';
    return [
      h('span', { class: 'name' }, t.name, mine ? ' (this session)' : ''),
      policy?.permission_groups.some((g) => g.id === EDIT_GROUP) ? 'Read and write' : 'Read only',
      account === '*' ? 'All accounts' : account,
      t.status,
      formatTime(t.issued_on),
      h(
        'span',
        { class: 'actions' },
        writeButton(
          'Roll',
          async () => {
            if (!(await confirmDialog(`Roll "${t.name}"? Its current value stops working at once.${warning}`, 'Roll')))
              return;
            put<string>(`/user/tokens/${enc(t.id)}/value`, {}).then(
              (value) => {
                // This session's own token: the session ended with the old value, so the list is not reloaded
                // (that would go to the sign-in page) and the new value is shown on this page as it is.
                if (mine) showValue(t.name, value);
                else void again({ name: t.name, value });
              },
              (error: unknown) => status.fail(error),
            );
          },
          { 'aria-label': `Roll ${t.name}` },
        ),
        writeButton(
          'Delete',
          async () => {
            if (!(await confirmDialog(`Delete "${t.name}"? It stops working at once.${warning}`, 'Delete token')))
              return;
            del(`/user/tokens/${enc(t.id)}`).then(
              () => void again(),
              (error: unknown) => status.fail(error),
            );
          },
          { 'aria-label': `Delete ${t.name}` },
        ),
      ),
    ];
  });
  if (reveal) showValue(reveal.name, reveal.value);
  replace(
    main,
    pageView(
      'API Tokens',
      shown,
      status.element,
      table(`API tokens (${list.length})`, ['Name', 'Access', 'Accounts', 'Status', 'Created', 'Actions'], rows),
      h('h2', null, 'Create a token'),
      guardForm(form),
    ),
  );
}
