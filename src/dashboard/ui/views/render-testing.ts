import type { SessionInfo } from '../state.ts';

/** Helpers for the render functions' unit tests (happy-dom): what a user would read and fill in. */

/** The text of each body cell, row by row, of every table under `roots`. */
export function cellTexts(roots: Element[]): string[][] {
  return roots.flatMap((root) =>
    Array.from(root.querySelectorAll('tbody tr')).map((row) =>
      Array.from(row.querySelectorAll('td')).map((cell) => (cell.textContent ?? '').trim()),
    ),
  );
}

/** The control a label names (`for` attribute), as a screen reader would find it. */
export function labelled<T extends HTMLElement = HTMLInputElement>(root: Element, text: string): T {
  const label = Array.from(root.querySelectorAll('label')).find((l) => l.textContent?.trim() === text);
  const control = label?.htmlFor ? root.querySelector<T>(`#${CSS.escape(label.htmlFor)}`) : null;
  if (!control) throw new Error(`no control labelled "${text}"`);
  return control;
}

/** The signed-in session the views read (read-only or not, the email, the account). */
export function signedInAs(
  state: { session: SessionInfo | undefined; accountId: string },
  session: Partial<SessionInfo>,
): void {
  state.accountId = 'acc1';
  state.session = {
    email: 'me@example.com',
    read_only: false,
    via: 'api_token',
    account_ids: ['acc1'],
    csrf_token: 'csrf',
    ...session,
  };
}

/**
 * Submits the first form under `root` as the browser does after its checks pass. happy-dom's own constraint check
 * refuses a weight of 1 with step 0.01 (a rounding error browsers do not make), so the event is sent directly.
 */
export function submit(root: Element): void {
  const form = root.querySelector('form');
  if (!form) throw new Error('no form');
  form.dispatchEvent(new Event('submit', { cancelable: true }));
}
