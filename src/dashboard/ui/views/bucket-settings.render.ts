import type { BucketCors, BucketLifecycle, CorsRule, LifecycleRule } from '../../../client/index.ts';
import { button, checkbox, field, h, table, uid } from '../dom.ts';
import { href } from '../router.ts';
import { guardForm, notice, pageView, writeButton } from '../ui-kit.ts';

/**
 * A bucket's settings drawn from their data: CORS and lifecycle rules as forms (one fieldset a rule), public access
 * with its URLs as a browser reaches them. r2.ts loads and saves through the client.
 */

const DAY = 86_400;
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'HEAD'] as const;

/** "a, b\nc" → ["a", "b", "c"]: list fields take commas or lines. */
export function listOf(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);
}

/** R2's location hints by name (the API answers the code). */
const LOCATIONS: Record<string, string> = {
  apac: 'Asia-Pacific (APAC)',
  eeur: 'Eastern Europe (EEUR)',
  enam: 'Eastern North America (ENAM)',
  weur: 'Western Europe (WEUR)',
  wnam: 'Western North America (WNAM)',
  oc: 'Oceania (OC)',
};
export function locationName(code: string | undefined): string {
  if (!code) return 'Automatic';
  return LOCATIONS[code.toLowerCase()] ?? code.toUpperCase();
}

/** A setting this server has no route for: said as such instead of a form. */
export type Setting<T> = { value: T } | { unavailable: string };

export interface BucketSettingsData {
  bucket: string;
  cors: Setting<BucketCors>;
  lifecycle: Setting<BucketLifecycle>;
  publicAccess: Setting<{
    managed: { domain: string; enabled: boolean };
    custom: { domain: string; enabled: boolean; status?: { ownership?: string } }[];
  }>;
  /** The traffic port, where public buckets are served over plain HTTP by Host; the browser's host name. */
  publicPort: number | undefined;
}

export interface BucketSettingsActions {
  saveCors(body: { rules: CorsRule[] }): Promise<unknown>;
  saveLifecycle(body: { rules: LifecycleRule[] }): Promise<unknown>;
  setManaged(enabled: boolean): Promise<unknown>;
}

export function renderBucketSettings(data: BucketSettingsData, actions: BucketSettingsActions): HTMLElement {
  return pageView(
    `Settings of ${data.bucket}`,
    h(
      'p',
      null,
      h('a', { href: href('r2', data.bucket) }, '← Objects'),
      ' · ',
      h('a', { href: href('r2') }, 'Buckets'),
    ),
    section('CORS policy', data.cors, (cors) => corsForm(cors.rules ?? [], actions.saveCors)),
    section('Object lifecycle rules', data.lifecycle, (lifecycle) =>
      lifecycleForm(lifecycle.rules ?? [], actions.saveLifecycle),
    ),
    section('Public access', data.publicAccess, (access) => publicAccess(access, data.publicPort, actions.setManaged)),
  );
}

function section<T>(title: string, setting: Setting<T>, body: (value: T) => Node): HTMLElement {
  return h(
    'section',
    { 'aria-label': title },
    h('h2', null, title),
    'unavailable' in setting
      ? h('p', null, `Not available on this server: ${setting.unavailable}`)
      : body(setting.value),
  );
}

/** A public URL as the user will reach it: scheme, host and the traffic port. */
export function publicUrl(host: string, port: number | undefined): string {
  return port ? `http://${host}:${port}/` : `http://${host}/`;
}

function publicAccess(
  access: Extract<BucketSettingsData['publicAccess'], { value: unknown }>['value'],
  port: number | undefined,
  setManaged: (enabled: boolean) => Promise<unknown>,
): HTMLElement {
  const status = notice();
  const url = publicUrl(access.managed.domain, port);
  return h(
    'div',
    null,
    access.managed.enabled
      ? h('p', null, 'Public at ', h('a', { href: url, rel: 'noopener noreferrer', target: '_blank' }, url))
      : h('p', null, 'Not public. When allowed, at ', h('code', null, url)),
    writeButton(access.managed.enabled ? 'Disallow access via r2.dev' : 'Allow access via r2.dev', () => {
      setManaged(!access.managed.enabled).catch((error: unknown) => status.fail(error));
    }),
    status.element,
    table(
      'Custom domains',
      ['Domain', 'URL', 'Enabled', 'Status'],
      access.custom.map((d) => [
        d.domain,
        publicUrl(d.domain, port),
        d.enabled ? 'Yes' : 'No',
        d.status?.ownership ?? '',
      ]),
      'No custom domains.',
    ),
  );
}

/** A card of rules with "Add a rule", each rule a fieldset with "Remove rule", and one save for all. */
function rulesForm<R>(
  title: string,
  rules: R[],
  ruleFields: (rule: R | undefined, index: number) => { element: HTMLElement; read(): R },
  save: (rules: R[]) => Promise<unknown>,
): HTMLFormElement {
  const status = notice();
  const list = h('div', { class: 'rules' });
  const entries: { element: HTMLElement; read(): R }[] = [];
  const add = (rule: R | undefined) => {
    const entry = ruleFields(rule, entries.length);
    const remove = button('Remove rule', () => {
      entries.splice(entries.indexOf(entry), 1);
      entry.element.remove();
    });
    entry.element.append(remove);
    entries.push(entry);
    list.append(entry.element);
  };
  rules.forEach(add);
  const form = h(
    'form',
    { class: 'card', 'aria-label': title },
    list,
    h(
      'div',
      { class: 'actions' },
      button('Add a rule', () => add(undefined)),
      h('button', { type: 'submit' }, `Save ${title}`),
    ),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    save(entries.map((e) => e.read())).then(
      () => status.ok('Saved.'),
      (error: unknown) => status.fail(error),
    );
  });
  return guardForm(form);
}

function corsForm(rules: CorsRule[], save: (body: { rules: CorsRule[] }) => Promise<unknown>): HTMLFormElement {
  return rulesForm(
    'CORS policy',
    rules,
    (rule, index) => {
      const origins = field(
        'Allowed origins',
        { value: rule?.allowed.origins.join(', ') ?? '' },
        'Comma-separated, e.g. https://app.example.com or *',
      );
      const methods = METHODS.map((m) => ({
        m,
        box: checkbox(m, rule ? rule.allowed.methods.includes(m) : m === 'GET'),
      }));
      const headers = field(
        'Allowed headers',
        { value: rule?.allowed.headers?.join(', ') ?? '' },
        'Comma-separated; empty: none',
      );
      const expose = field('Exposed headers', { value: rule?.exposeHeaders?.join(', ') ?? '' });
      const maxAge = field('Max age (seconds)', { type: 'number', min: 0, value: rule?.maxAgeSeconds ?? '' });
      const element = h(
        'fieldset',
        { class: 'rule' },
        h('legend', null, `Rule ${index + 1}`),
        origins.row,
        h(
          'fieldset',
          { class: 'inline' },
          h('legend', null, 'Allowed methods'),
          methods.map((x) => x.box.row),
        ),
        headers.row,
        expose.row,
        maxAge.row,
      );
      return {
        element,
        read: () => {
          const read: CorsRule = {
            ...(rule?.id ? { id: rule.id } : {}),
            allowed: {
              origins: listOf(origins.input.value),
              methods: methods.filter((x) => x.box.input.checked).map((x) => x.m),
            },
          };
          const allowedHeaders = listOf(headers.input.value);
          if (allowedHeaders.length) read.allowed.headers = allowedHeaders;
          const exposed = listOf(expose.input.value);
          if (exposed.length) read.exposeHeaders = exposed;
          if (maxAge.input.value !== '') read.maxAgeSeconds = Number(maxAge.input.value);
          return read;
        },
      };
    },
    (next) => save({ rules: next }),
  );
}

type AgeOrDate = { type: 'Age'; maxAge: number } | { type: 'Date'; date: string } | undefined;

/** "Never", "After N days" or "On a date": a condition of a lifecycle rule, as two controls. */
function whenField(label: string, condition: AgeOrDate, allowDate: boolean) {
  const id = uid();
  const kind = h(
    'select',
    { id, 'aria-label': `${label}: when` },
    h('option', { value: '' }, 'Never'),
    h('option', { value: 'Age', selected: condition?.type === 'Age' }, 'After days'),
    allowDate ? h('option', { value: 'Date', selected: condition?.type === 'Date' }, 'On date') : null,
  );
  const value = h('input', {
    'aria-label': `${label}: days or date`,
    value:
      condition?.type === 'Age'
        ? condition.maxAge / DAY
        : condition?.type === 'Date'
          ? condition.date.slice(0, 10)
          : '',
    placeholder: 'days, or YYYY-MM-DD',
  });
  const row = h('div', { class: 'field' }, h('label', { for: id }, label), h('div', { class: 'inline' }, kind, value));
  const read = (): AgeOrDate => {
    if (kind.value === 'Age') return { type: 'Age', maxAge: Math.round(Number(value.value) * DAY) };
    if (kind.value === 'Date') return { type: 'Date', date: `${value.value.trim()}T00:00:00Z` };
    return undefined;
  };
  return { row, read };
}

function lifecycleForm(
  rules: LifecycleRule[],
  save: (body: { rules: LifecycleRule[] }) => Promise<unknown>,
): HTMLFormElement {
  return rulesForm(
    'Object lifecycle rules',
    rules,
    (rule, index) => {
      const id = field('Rule name', { value: rule?.id ?? `rule-${index + 1}`, required: true });
      const enabled = checkbox('Enabled', rule?.enabled ?? true);
      const prefix = field('Prefix', { value: rule?.conditions.prefix ?? '' }, 'Empty: every object');
      const remove = whenField('Delete objects', rule?.deleteObjectsTransition?.condition, true);
      const abort = whenField(
        'Abort incomplete multipart uploads',
        rule?.abortMultipartUploadsTransition?.condition,
        false,
      );
      const toInfrequent = whenField('Move to Infrequent Access', rule?.storageClassTransitions?.[0]?.condition, true);
      const element = h(
        'fieldset',
        { class: 'rule' },
        h('legend', null, `Rule ${index + 1}`),
        id.row,
        enabled.row,
        prefix.row,
        remove.row,
        abort.row,
        toInfrequent.row,
      );
      return {
        element,
        read: () => {
          const read: LifecycleRule = {
            id: id.input.value,
            enabled: enabled.input.checked,
            conditions: { prefix: prefix.input.value },
          };
          const deletion = remove.read();
          if (deletion) read.deleteObjectsTransition = { condition: deletion };
          const aborting = abort.read();
          if (aborting?.type === 'Age') read.abortMultipartUploadsTransition = { condition: aborting };
          const moving = toInfrequent.read();
          if (moving) read.storageClassTransitions = [{ condition: moving, storageClass: 'InfrequentAccess' }];
          return read;
        },
      };
    },
    (next) => save({ rules: next }),
  );
}
