import { acct, state } from '../state.ts';
import { del, enc, get, put, post } from '../api.ts';
import { replace } from '../dom.ts';
import type { ApiToken, Member, Membership, Role } from '../../../client/index.ts';
import { renderMembers } from './members.render.ts';
import { renderTokens, type RevealedToken } from './tokens.render.ts';

/** Members: loaded and changed through the client; members.render.ts draws the page. */
export async function members(main: HTMLElement, message?: string): Promise<void> {
  const [own, list, roles] = await Promise.all([
    get<Membership[]>('/memberships', { per_page: 50 }),
    get<Member[]>(`${acct()}/members`, { per_page: 50 }),
    get<Role[]>(`${acct()}/roles`),
  ]);
  const again = (said?: string) => members(main, said);
  replace(
    main,
    renderMembers(
      { own, members: list, roles, readOnly: !state.session || state.session.read_only, message },
      {
        invite: async ({ email, role }) => {
          const member = await post<Member>(`${acct()}/members`, { email, roles: [role] });
          await again(`Invited ${member.email} (${member.status}).`);
        },
        saveRole: (member, roleId) => put(`${acct()}/members/${enc(member.id)}`, { roles: [{ id: roleId }] }),
        remove: async (member) => {
          await del(`${acct()}/members/${enc(member.id)}`);
          await again();
        },
        accept: async (membership) => {
          await put(`/memberships/${enc(membership.id)}`, { status: 'accepted' });
          await again();
        },
      },
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
