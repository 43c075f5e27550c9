import { del, enc, get, page, post } from '../api.ts';
import { field, formatTime, h, replace, table } from '../dom.ts';
import { state } from '../state.ts';
import { confirmDialog, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

interface Zone {
  id: string;
  name: string;
  status: string;
  account: { id: string; name: string };
  created_on: string;
}

/** Zones: hostnames of the account that load balancers live in. */
export async function zones(main: HTMLElement, pageNumber = 1): Promise<void> {
  const result = await page<Zone>('/zones', pageNumber, 50, { 'account.id': state.accountId });
  const status = notice();
  const name = field('Zone name', { required: true, placeholder: 'example.com' });
  const form = h(
    'form',
    { class: 'card inline' },
    name.row,
    h('button', { type: 'submit' }, 'Add zone'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    post('/zones', { name: name.input.value, account: { id: state.accountId } }).then(
      () => void zones(main),
      (error: unknown) => status.fail(error),
    );
  });
  replace(
    main,
    pageView(
      'Zones',
      guardForm(form),
      table(
        `Zones (${result.totalCount})`,
        ['Zone', 'Status', 'Created', 'ID', 'Actions'],
        result.items.map((z) => [
          z.name,
          z.status,
          formatTime(z.created_on),
          h('code', null, z.id),
          writeButton('Delete', async () => {
            if (!(await confirmDialog(`Delete the zone "${z.name}" and its load balancers?`, 'Delete zone'))) return;
            del(`/zones/${enc(z.id)}`).then(
              () => void zones(main),
              (error: unknown) => status.fail(error),
            );
          }),
        ]),
      ),
      pager(result.page, result.totalPages, (next) => void zones(main, next)),
    ),
  );
}

interface Membership {
  id: string;
  status: string;
  account: { id: string; name: string };
  roles?: string[];
  permissions?: Record<string, unknown>;
}

/** Members: the signed-in user's memberships (accounts and roles); `ledge admin` adds users to accounts. */
export async function members(main: HTMLElement): Promise<void> {
  const list = await get<Membership[]>('/memberships', { per_page: 50 });
  replace(
    main,
    pageView(
      'Members',
      h('p', null, 'Your memberships. Invite users with ', h('code', null, 'ledge admin'), ' on the server.'),
      table(
        'Memberships',
        ['Account', 'Account ID', 'Status', 'Roles'],
        list.map((m) => [m.account.name, h('code', null, m.account.id), m.status, (m.roles ?? []).join(', ')]),
      ),
    ),
  );
}

/** API Tokens: the token this session uses (verify); tokens are made with `ledge admin token create`. */
export async function tokens(main: HTMLElement): Promise<void> {
  const rows: string[][] = [];
  if (state.session?.via === 'api_token') {
    const token = await get<{ id: string; status: string; expires_on?: string; not_before?: string }>(
      '/user/tokens/verify',
    );
    rows.push([
      token.id,
      token.status,
      token.expires_on ?? 'never',
      state.session.read_only ? 'Read-only' : 'Read and write',
    ]);
  }
  replace(
    main,
    pageView(
      'API Tokens',
      h(
        'p',
        null,
        state.session?.via === 'api_token'
          ? 'This session signed in with the token below.'
          : 'This session signed in with a global API key.',
        ' Create or revoke tokens with ',
        h('code', null, 'ledge admin token create|revoke'),
        '.',
      ),
      table('Token of this session', ['Token ID', 'Status', 'Expires', 'Access'], rows),
    ),
  );
}
