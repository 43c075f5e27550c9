// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { SessionInfo } from '../state.ts';
import { labelled, submit } from './render-testing.ts';
import { renderSignIn } from './sign-in.ts';

const signedIn: SessionInfo = {
  email: 'me@example.com',
  read_only: false,
  via: 'api_token',
  account_ids: ['acc1'],
  csrf_token: 'csrf',
};

describe('the sign-in form', () => {
  it('sends the API token, clears it once signed in, and enters with the session', async () => {
    const signIn = vi.fn(async () => signedIn);
    const enter = vi.fn(async () => undefined);
    const view = renderSignIn(signIn, enter);
    const token = labelled(view, 'API token');
    token.value = '  tok-123 ';
    submit(view);
    await vi.waitFor(() => expect(enter).toHaveBeenCalledWith(signedIn));
    expect(signIn).toHaveBeenCalledWith({ api_token: 'tok-123' });
    expect(token.value).toBe('');
  });

  it('sends a global API key with its email when no token is given, and shows a refusal', async () => {
    const signIn = vi.fn(async () => {
      throw new Error('Invalid API key');
    });
    const enter = vi.fn(async () => undefined);
    const view = renderSignIn(signIn, enter);
    labelled(view, 'Email').value = 'me@example.com';
    labelled(view, 'Global API key').value = 'key1';
    submit(view);
    await vi.waitFor(() => expect(view.textContent).toContain('Invalid API key'));
    expect(signIn).toHaveBeenCalledWith({ email: 'me@example.com', api_key: 'key1' });
    expect(enter).not.toHaveBeenCalled();
  });
});
