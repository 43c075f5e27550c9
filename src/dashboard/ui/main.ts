import './style.css';
import { ApiError, get, session as sessionCall, setCsrf, whenSignedOut } from './api.ts';
import { replace } from './dom.ts';
import { renderShell } from './shell.ts';
import { state, type SessionInfo } from './state.ts';
import { renderSignIn } from './views/sign-in.ts';

const app = document.getElementById('app')!;

/** Signed in: the shell and the page the URL names; otherwise the sign-in page. */
export async function boot(): Promise<void> {
  try {
    const session = await sessionCall<SessionInfo>('GET');
    await enter(session);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 400 || error.status === 403)) {
      showSignIn();
      return;
    }
    throw error;
  }
}

async function enter(session: SessionInfo): Promise<void> {
  state.session = session;
  setCsrf(session.csrf_token);
  state.accounts = await get<{ id: string; name: string }[]>('/accounts', { per_page: 50 });
  state.accountId = state.accounts.find((a) => a.id === state.accountId)?.id ?? state.accounts[0]?.id ?? '';
  renderShell(app);
}

function showSignIn(): void {
  state.session = undefined;
  setCsrf('');
  replace(
    app,
    renderSignIn((body) => sessionCall<SessionInfo>('POST', body), enter),
  );
}

whenSignedOut(() => {
  if (state.session) showSignIn();
});
boot().catch((error: unknown) => {
  replace(app, `The dashboard could not start: ${error instanceof Error ? error.message : String(error)}`);
});
