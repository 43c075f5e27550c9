import { ApiError } from './api.ts';
import { button, h, replace, type Child } from './dom.ts';
import { readOnly } from './state.ts';

/** A page: heading (focused on arrival, so screen readers and keyboards start there) and content. */
export function pageView(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'page' }, h('h1', { tabindex: -1 }, title), ...children);
}

/** A line that says what happened (role=status, announced) or what failed (role=alert). */
export function notice(): { element: HTMLElement; ok(text: string): void; fail(error: unknown): void; clear(): void } {
  const element = h('p', { class: 'notice', role: 'status' });
  return {
    element,
    ok(text) {
      element.className = 'notice ok';
      element.setAttribute('role', 'status');
      replace(element, text);
    },
    fail(error) {
      element.className = 'notice error';
      element.setAttribute('role', 'alert');
      replace(element, errorText(error));
    },
    clear() {
      replace(element);
    },
  };
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message} (${error.code || error.status})`;
  return error instanceof Error ? error.message : String(error);
}

/** A button that changes something: disabled, with the reason, for a read-only token. */
export function writeButton(
  label: string,
  onClick: (event: Event) => void,
  attributes: Record<string, string> = {},
): HTMLButtonElement {
  const element = button(label, onClick, attributes);
  if (readOnly()) {
    element.disabled = true;
    element.title = 'Read-only token: this cannot be changed';
  }
  return element;
}

/** Disables every control of a form for a read-only token (the API refuses its writes anyway). */
export function guardForm(form: HTMLFormElement): HTMLFormElement {
  if (readOnly()) {
    for (const control of Array.from(form.elements)) (control as HTMLInputElement).disabled = true;
    form.prepend(h('p', { class: 'notice' }, 'Read-only token: you can look, not change.'));
  }
  return form;
}

/** Asks before something that cannot be undone, in a real dialog (focus moves into it, Escape cancels). */
export function confirmDialog(message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { 'aria-labelledby': 'confirm-text' });
    const done = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.append(
      h('p', { id: 'confirm-text' }, message),
      h(
        'div',
        { class: 'actions' },
        button('Cancel', () => done(false)),
        button(confirmLabel, () => done(true), { class: 'danger' }),
      ),
    );
    dialog.addEventListener('cancel', () => done(false));
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Previous/next over page-numbered lists. */
export function pager(pageNumber: number, totalPages: number, show: (page: number) => void): HTMLElement {
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    button('Previous page', () => show(pageNumber - 1), { disabled: pageNumber <= 1 }),
    h('span', null, `Page ${pageNumber} of ${Math.max(totalPages, 1)}`),
    button('Next page', () => show(pageNumber + 1), { disabled: pageNumber >= totalPages }),
  );
}

export type TimeRange = 'hour' | 'day' | 'week';
const RANGE_LABELS: Record<TimeRange, string> = { hour: 'Last hour', day: 'Last day', week: 'Last week' };

/**
 * The one time-range control of every chart: a group of toggle buttons, the chosen one pressed. `choose` runs on a
 * click (a page with the range in its URL navigates, one without redraws).
 */
export function rangePicker(
  current: TimeRange,
  choose: (range: TimeRange) => void,
): { element: HTMLElement; select(range: TimeRange): void } {
  const buttons = (Object.keys(RANGE_LABELS) as TimeRange[]).map((range) =>
    button(RANGE_LABELS[range], () => choose(range), { 'aria-pressed': String(range === current) }),
  );
  const select = (range: TimeRange) =>
    buttons.forEach((b, i) => b.setAttribute('aria-pressed', String(Object.keys(RANGE_LABELS)[i] === range)));
  return { element: h('div', { class: 'actions range', role: 'group', 'aria-label': 'Time range' }, buttons), select };
}
