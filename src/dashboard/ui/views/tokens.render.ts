import type { ApiToken } from '../../../client/index.ts';
import { field, formatTime, h, table, uid } from '../dom.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';

/** The API Tokens page drawn from its data; access.ts loads and saves through the client. */

export const EDIT_GROUP = 'c8fed203ed3043cba015a93ad1616f1f';
export const READ_GROUP = '82e64a83756745bbbb1c9c2701bf816b';

/** A labelled select (the label is its accessible name; `quiet`: read by screen readers only, as in a table row). */
export function select(label: string, options: { value: string; text: string }[], value?: string, quiet = false) {
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
 * A token's value and its S3 credentials, shown once after it is made or rolled. R2's S3 API takes the token's id
 * as the Access Key ID and the SHA-256 (hex) of its value as the Secret Access Key, so both change on a roll.
 */
export interface RevealedToken {
  name: string;
  value: string;
  accessKeyId: string;
  secretAccessKey: string;
}

function readOnlyInput(label: string, value: string): HTMLElement[] {
  const id = uid();
  return [
    h('label', { for: id }, label),
    h('input', { id, readonly: true, value, class: 'wide', autocomplete: 'off', spellcheck: 'false' }),
  ];
}

/** The one place a token's value and S3 secret are ever shown: after it is made or rolled, until the page changes. */
export function renderRevealed(token: RevealedToken): HTMLElement[] {
  return [
    h('p', { role: 'status' }, `The value of "${token.name}". Copy it now: it is not shown again.`),
    ...readOnlyInput('Token value', token.value),
    h('p', null, 'For the S3 API (aws, rclone, s3cmd, an S3 SDK):'),
    ...readOnlyInput('S3 Access Key ID', token.accessKeyId),
    ...readOnlyInput('S3 Secret Access Key', token.secretAccessKey),
  ];
}

export interface TokensData {
  tokens: ApiToken[];
  /** The token this session signed in with, if any. */
  currentId: string | undefined;
  accountId: string;
  reveal?: RevealedToken | undefined;
  /** The S3 API's address as the browser reaches this server, when it listens. */
  s3Endpoint?: string | undefined;
}

export interface TokenActions {
  create(input: { name: string; group: string; account: string }): Promise<unknown>;
  roll(token: ApiToken, mine: boolean): Promise<RevealedToken>;
  remove(token: ApiToken): Promise<unknown>;
}

/**
 * API Tokens: the user's tokens with each one's S3 Access Key ID, a new token (its value and S3 secret shown once),
 * a token's value rolled (the old one stops at once) and a token deleted, each with confirmation.
 */
export function renderTokens(data: TokensData, actions: TokenActions): HTMLElement {
  const status = notice();
  const shown = h('div', { class: 'card secret', hidden: true });
  const show = (token: RevealedToken) => {
    shown.hidden = false;
    shown.replaceChildren(...renderRevealed(token));
  };
  const name = field('Token name', { required: true });
  const access = select('Access', [
    { value: EDIT_GROUP, text: 'Read and write' },
    { value: READ_GROUP, text: 'Read only' },
  ]);
  const scope = select('Accounts', [
    { value: data.accountId, text: 'This account only' },
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
    actions
      .create({ name: name.input.value, group: access.element.value, account: scope.element.value })
      .catch((error: unknown) => status.fail(error));
  });
  const rows = data.tokens.map((t) => {
    const policy = t.policies[0];
    const resource = Object.keys(policy?.resources ?? {})[0] ?? '';
    const account = resource.replace('com.cloudflare.api.account.', '');
    const mine = t.id === data.currentId;
    const warning = mine ? ' This session signed in with it: you will be signed out.' : '';
    return [
      h('span', { class: 'name' }, t.name, mine ? ' (this session)' : ''),
      policy?.permission_groups.some((g) => g.id === EDIT_GROUP) ? 'Read and write' : 'Read only',
      account === '*' ? 'All accounts' : account,
      t.status,
      formatTime(t.issued_on),
      h('code', null, t.id),
      h(
        'span',
        { class: 'actions' },
        writeButton(
          'Roll',
          async () => {
            if (!(await confirmDialog(`Roll "${t.name}"? Its current value stops working at once.${warning}`, 'Roll')))
              return;
            actions.roll(t, mine).then(show, (error: unknown) => status.fail(error));
          },
          { 'aria-label': `Roll ${t.name}` },
        ),
        writeButton(
          'Delete',
          async () => {
            if (!(await confirmDialog(`Delete "${t.name}"? It stops working at once.${warning}`, 'Delete token')))
              return;
            actions.remove(t).catch((error: unknown) => status.fail(error));
          },
          { 'aria-label': `Delete ${t.name}` },
        ),
      ),
    ];
  });
  if (data.reveal) show(data.reveal);
  return pageView(
    'API Tokens',
    shown,
    status.element,
    table(
      `API tokens (${data.tokens.length})`,
      ['Name', 'Access', 'Accounts', 'Status', 'Created', 'S3 Access Key ID', 'Actions'],
      rows,
      'No tokens yet.',
    ),
    h(
      'p',
      null,
      'A token is also an S3 key pair: its id is the Access Key ID, the SHA-256 of its value the Secret Access Key (shown once, when it is made or rolled).',
      data.s3Endpoint ? [' S3 endpoint: ', h('code', null, data.s3Endpoint), '.'] : null,
    ),
    h('h2', null, 'Create a token'),
    guardForm(form),
  );
}
