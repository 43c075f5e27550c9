/**
 * The one way the dashboard makes elements. Children given as strings become text nodes, attributes are set one
 * by one: what a user stored (object keys, script names, log lines) can only ever be text. Nothing here, or
 * anywhere in the dashboard, assigns innerHTML.
 */
export type Child = Node | string | number | null | undefined | false | Child[];

type Attributes = Record<string, string | number | boolean | null | undefined | EventListener> & {
  dataset?: never;
};

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

let ids = 0;
/** A unique id, for label/input pairs. */
export function uid(prefix = 'f'): string {
  return `${prefix}-${++ids}`;
}

/** A labelled input (the label is the field's accessible name). */
export function field(
  label: string,
  attributes: Attributes = {},
  hint?: string,
): { row: HTMLElement; input: HTMLInputElement } {
  const id = uid();
  const hintId = hint ? `${id}-hint` : undefined;
  const input = h('input', { id, name: id, 'aria-describedby': hintId, ...attributes });
  const row = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    input,
    hint ? h('small', { id: hintId }, hint) : null,
  );
  return { row, input };
}

export function checkbox(
  label: string,
  checked: boolean,
  attributes: Attributes = {},
): { row: HTMLElement; input: HTMLInputElement } {
  const id = uid();
  const input = h('input', { id, type: 'checkbox', checked, ...attributes });
  return { row: h('div', { class: 'check' }, input, h('label', { for: id }, label)), input };
}

export function button(label: string, onClick: (event: Event) => void, attributes: Attributes = {}): HTMLButtonElement {
  return h('button', { type: 'button', onclick: onClick as EventListener, ...attributes }, label);
}

/**
 * A table with a caption (its accessible name) and one row per item, or `empty` saying why there are none. It sits
 * in a box that scrolls sideways on a narrow screen, so a wide table never widens the page.
 */
export function table(
  caption: string,
  headings: string[],
  rows: Child[][],
  empty = 'None yet.',
  /** The heading above already says it: the caption stays the table's name for screen readers, unseen. */
  quietCaption = false,
): HTMLElement {
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      null,
      h('caption', { class: quietCaption ? 'sr-only' : undefined }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headings.map((text) => h('th', { scope: 'col' }, text)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.length === 0
          ? h('tr', null, h('td', { colspan: headings.length }, empty))
          : rows.map((cells) =>
              h(
                'tr',
                null,
                cells.map((cell) => h('td', null, cell)),
              ),
            ),
      ),
    ),
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
