import { field, h } from '../dom.ts';
import type { SessionInfo } from '../state.ts';
import { notice } from '../ui-kit.ts';

/** What the sign-in form sends: an API token, or a global API key with its email. */
export type SignInBody = { api_token: string } | { email: string; api_key: string };

/**
 * Sign-in with an API token (or a global API key with its email). `signIn` sends it (main.ts: the server checks it
 * as the API would and answers with an HttpOnly session cookie); the credential itself is never kept by the page.
 */
export function renderSignIn(
  signIn: (body: SignInBody) => Promise<SessionInfo>,
  enter: (session: SessionInfo) => Promise<void>,
): HTMLElement {
  const token = field('API token', { type: 'password', autocomplete: 'off', spellcheck: 'false' });
  const email = field('Email', { type: 'email', autocomplete: 'username' });
  const key = field('Global API key', { type: 'password', autocomplete: 'off' });
  const status = notice();
  const useKey = h('details', null, h('summary', null, 'Use a global API key instead'), email.row, key.row);
  const form = h(
    'form',
    { class: 'card sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in to Ledge'),
    h('p', null, 'Use an API token (`ledge dashboard` prints a one-time sign-in link instead).'),
    token.row,
    useKey,
    h('button', { type: 'submit', class: 'primary' }, 'Log in'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body: SignInBody =
      token.input.value.trim() !== ''
        ? { api_token: token.input.value.trim() }
        : { email: email.input.value.trim(), api_key: key.input.value.trim() };
    status.ok('Signing in…');
    signIn(body)
      .then((signedIn) => {
        token.input.value = '';
        key.input.value = '';
        return enter(signedIn);
      })
      .catch((error: unknown) => status.fail(error));
  });
  return h('main', { id: 'main', class: 'sign-in-page' }, form);
}
