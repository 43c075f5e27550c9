import { acct, state } from '../state.ts';
import { del, enc, get, put, post } from '../api.ts';
import { checkbox, field, h, replace, table } from '../dom.ts';
import type { ApiToken } from '../../../client/index.ts';
import { renderTokens, select, type RevealedToken } from './tokens.render.ts';
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
  const accepted = checkbox('Add as accepted (no invitation to answer)', false);
  const form = h(
    'form',
    { class: 'card' },
    email.row,
    role.row,
    accepted.row,
    h('button', { type: 'submit' }, 'Invite member'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post<Member>(`${acct()}/members`, {
      email: email.input.value,
      roles: [role.element.value],
      status: accepted.input.checked ? 'accepted' : 'pending',
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

/** The S3 Secret Access Key of a token value: its SHA-256, hex (as R2's S3 API derives it). */
async function s3Secret(value: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

async function revealed(id: string, name: string, value: string): Promise<RevealedToken> {
  return { name, value, accessKeyId: id, secretAccessKey: await s3Secret(value) };
}

/** The address of a door of this server as the browser reaches it (its host, that door's port). */
export function endpointUrl(port: number | undefined): string | undefined {
  return port ? `${location.protocol}//${location.hostname}:${port}` : undefined;
}

/** API Tokens: loaded and changed through the client; tokens.render.ts draws the page. */
export async function tokens(main: HTMLElement, reveal?: RevealedToken): Promise<void> {
  const [list, current] = await Promise.all([
    get<ApiToken[]>('/user/tokens', { per_page: 50 }),
    state.session?.via === 'api_token' ? get<{ id: string }>('/user/tokens/verify') : Promise.resolve(undefined),
  ]);
  replace(
    main,
    renderTokens(
      {
        tokens: list,
        currentId: current?.id,
        accountId: state.accountId,
        reveal,
        s3Endpoint: endpointUrl(state.session?.endpoints?.s3_port),
      },
      {
        create: async ({ name, group, account }) => {
          const token = await post<ApiToken & { value: string }>('/user/tokens', {
            name,
            policies: [
              {
                effect: 'allow',
                permission_groups: [{ id: group }],
                resources: { [`com.cloudflare.api.account.${account}`]: '*' },
              },
            ],
          });
          await tokens(main, await revealed(token.id, token.name, token.value));
        },
        roll: async (token, mine) => {
          const value = await put<string>(`/user/tokens/${enc(token.id)}/value`, {});
          const shown = await revealed(token.id, token.name, value);
          // This session's own token: the session ended with the old value, so the list is not reloaded (that
          // would go to the sign-in page) and the new value is shown on this page as it is.
          if (!mine) await tokens(main, shown);
          return shown;
        },
        remove: async (token) => {
          await del(`/user/tokens/${enc(token.id)}`);
          await tokens(main);
        },
      },
    ),
  );
}
