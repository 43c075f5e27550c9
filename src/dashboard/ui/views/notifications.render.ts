import type {
  NotificationHistoryItem,
  NotificationPolicy,
  NotificationPolicyInput,
  WebhookDestination,
} from '../../../client/index.ts';
import { checkbox, field, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, guardForm, notice, pageView, pager, writeButton } from '../ui-kit.ts';

/** The notification pages drawn from their data; notifications.ts loads and saves through the client. */

export const HEALTH_ALERT = 'load_balancing_health_alert';

export function tabs(current: string): HTMLElement {
  const link = (name: string, label: string) =>
    h(
      'a',
      {
        href: name ? href('notifications', name) : href('notifications'),
        'aria-current': current === name ? 'page' : undefined,
      },
      label,
    );
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'Notifications' },
    link('', 'Policies'),
    link('destinations', 'Destinations'),
    link('history', 'Alert history'),
    link('migration', 'Email migration'),
  );
}

/** A policy's recipients by name: email addresses as they are, webhooks by their destination's name. */
export function recipientNames(policy: NotificationPolicy, hooks: readonly WebhookDestination[]): string {
  const hookName = (id: string) => hooks.find((w) => w.id === id)?.name ?? `webhook ${id.slice(0, 8)} (deleted)`;
  const names = [
    ...(policy.mechanisms.email ?? []).map((m) => m.id ?? ''),
    ...(policy.mechanisms.webhooks ?? []).map((m) => `webhook "${hookName(m.id ?? '')}"`),
  ];
  return names.join(', ') || 'No one';
}

/** The pools a health alert watches, by name ("All pools" when it names none). */
export function poolNamesOf(policy: NotificationPolicy, poolNames: ReadonlyMap<string, string>): string {
  if (policy.alert_type !== HEALTH_ALERT) return '';
  const ids = policy.filters.pool_id ?? [];
  if (ids.length === 0) return 'All pools';
  return ids.map((id) => poolNames.get(id) ?? `${id} (no such pool)`).join(', ');
}

export interface PoliciesData {
  policies: NotificationPolicy[];
  hooks: WebhookDestination[];
  poolNames: ReadonlyMap<string, string>;
}

/** Policies: list, edit, test, delete; "Create" opens the form. */
export function renderPolicies(
  data: PoliciesData,
  actions: {
    test(policy: NotificationPolicy): Promise<{ text: string; failed: boolean }>;
    remove(id: string): Promise<unknown>;
  },
): HTMLElement {
  const status = notice();
  const rows = data.policies.map((policy) => [
    h('span', { class: 'name' }, policy.name),
    policy.alert_type,
    policy.enabled ? 'Enabled' : 'Disabled',
    poolNamesOf(policy, data.poolNames),
    recipientNames(policy, data.hooks),
    h(
      'span',
      { class: 'actions' },
      h('a', { href: href('notifications', 'policies', policy.id), class: 'button' }, 'Edit'),
      writeButton(
        'Test',
        (event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          status.ok(`Testing "${policy.name}"…`);
          void actions.test(policy).then(({ text, failed }) => {
            button.disabled = false;
            if (failed) status.fail(new Error(text));
            else status.ok(text);
          });
        },
        { 'aria-label': `Test ${policy.name}` },
      ),
      writeButton('Delete', async () => {
        if (!(await confirmDialog(`Delete the notification "${policy.name}"?`, 'Delete'))) return;
        actions.remove(policy.id).catch((error: unknown) => status.fail(error));
      }),
    ),
  ]);
  return pageView(
    'Notifications',
    tabs(''),
    h(
      'div',
      { class: 'actions' },
      h('a', { href: `${href('notifications', 'new')}?alert_type=${HEALTH_ALERT}`, class: 'button' }, 'Create'),
    ),
    status.element,
    table(
      'Notification policies',
      ['Name', 'Alert type', 'State', 'Pools', 'Recipients', 'Actions'],
      rows,
      'No notifications yet: "Create" sends an alert when a pool or origin changes health.',
    ),
  );
}

export interface PolicyFormData {
  existing?: NotificationPolicy | undefined;
  alertType: string;
  /** Every pool of the account (the picker), by id and name. */
  pools: { id: string; name: string }[];
  /** The pools checked when the form opens (a new alert's from "Create a Health Alert", an existing one's own). */
  chosenPools: string[];
  hooks: WebhookDestination[];
  /** Who a new policy mails by default: the signed-in user. */
  defaultEmail: string;
}

/**
 * The notification form, for a new policy or an existing one. A health alert picks its pools from the account's
 * (none checked: every pool), its health states and event sources.
 */
export function renderPolicyForm(
  data: PolicyFormData,
  actions: { save(body: NotificationPolicyInput): Promise<unknown> },
): HTMLElement {
  const { existing, alertType } = data;
  const name = field('Name', { required: true, value: existing?.name ?? '' });
  const description = field('Description', { value: existing?.description ?? '' });
  const enabled = checkbox('Enabled', existing?.enabled ?? true);
  const health = existing?.filters.new_health ?? ['Healthy', 'Unhealthy'];
  const sources = existing?.filters.event_source ?? ['pool', 'origin'];
  const healthy = checkbox('Healthy', health.includes('Healthy'));
  const unhealthy = checkbox('Unhealthy', health.includes('Unhealthy'));
  const poolSource = checkbox('Pool', sources.includes('pool'));
  const originSource = checkbox('Origin', sources.includes('origin'));
  const emails = field(
    'Email recipients',
    { value: (existing?.mechanisms.email?.map((m) => m.id ?? '') ?? [data.defaultEmail]).join(', ') },
    'Comma-separated addresses',
  );
  const hookBoxes = data.hooks.map((w) => ({
    id: w.id,
    box: checkbox(w.name, existing?.mechanisms.webhooks?.some((m) => m.id === w.id) ?? false),
  }));
  // Pools the policy names that are gone stay listed (and checked) so saving does not drop them unseen.
  const known = new Set(data.pools.map((p) => p.id));
  const listed = [
    ...data.pools,
    ...data.chosenPools.filter((id) => !known.has(id)).map((id) => ({ id, name: `${id} (no such pool)` })),
  ];
  const poolBoxes = listed.map((p) => ({ id: p.id, box: checkbox(p.name, data.chosenPools.includes(p.id)) }));
  const status = notice();
  const isHealth = alertType === HEALTH_ALERT;
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Notification' },
    h('p', null, 'Alert type: ', h('code', null, alertType)),
    name.row,
    description.row,
    enabled.row,
    isHealth
      ? h(
          'fieldset',
          { class: 'picker' },
          h('legend', null, 'Pools'),
          h('small', null, 'None checked: every pool of the account, present and future.'),
          poolBoxes.length
            ? poolBoxes.map((p) => p.box.row)
            : h('p', null, 'No pools yet: the alert covers all pools.'),
        )
      : null,
    isHealth ? h('fieldset', null, h('legend', null, 'Health status'), healthy.row, unhealthy.row) : null,
    isHealth ? h('fieldset', null, h('legend', null, 'Event source'), poolSource.row, originSource.row) : null,
    h(
      'fieldset',
      null,
      h('legend', null, 'Delivery'),
      emails.row,
      hookBoxes.map((w) => w.box.row),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const filters: Record<string, string[]> = { ...(existing?.filters ?? {}) } as Record<string, string[]>;
    if (isHealth) {
      const chosen = poolBoxes.filter((p) => p.box.input.checked).map((p) => p.id);
      if (chosen.length) filters['pool_id'] = chosen;
      else delete filters['pool_id'];
      filters['new_health'] = [healthy.input.checked && 'Healthy', unhealthy.input.checked && 'Unhealthy'].filter(
        (v): v is string => Boolean(v),
      );
      filters['event_source'] = [poolSource.input.checked && 'pool', originSource.input.checked && 'origin'].filter(
        (v): v is string => Boolean(v),
      );
      for (const key of ['new_health', 'event_source']) if (filters[key]!.length === 0) delete filters[key];
    }
    const addresses = emails.input.value
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    actions
      .save({
        name: name.input.value,
        description: description.input.value,
        enabled: enabled.input.checked,
        // The server checks the type against the ones it knows.
        alert_type: alertType as NotificationPolicyInput['alert_type'],
        mechanisms: {
          email: addresses.map((id) => ({ id })),
          webhooks: hookBoxes.filter((w) => w.box.input.checked).map((w) => ({ id: w.id })),
        },
        filters,
      })
      .catch((error: unknown) => status.fail(error));
  });
  return pageView(existing ? `Edit notification ${existing.name}` : 'Create a Health Alert', tabs(''), guardForm(form));
}

export interface HistoryData {
  items: NotificationHistoryItem[];
  page: number;
  totalPages: number;
  totalCount: number;
  days: number;
}

/** Alert history: every delivery attempt with its status, attempt number and error, and the chart's box. */
export function renderHistory(
  data: HistoryData,
  actions: { showPage(page: number): void },
): { view: HTMLElement; chartBox: HTMLElement } {
  const chartBox = h('div', {
    class: 'chart',
    role: 'img',
    'aria-label': `Alert deliveries per hour, last ${data.days} days`,
  });
  const view = pageView(
    'Notifications',
    tabs('history'),
    h('h2', null, 'Deliveries over time'),
    data.totalCount === 0 ? h('p', null, `No alerts were sent in the last ${data.days} days.`) : chartBox,
    table(
      `Alert history (${data.totalCount})`,
      ['Sent', 'Alert', 'Type', 'Delivered to', 'Status', 'Attempt', 'Error'],
      data.items.map((item) => [
        formatTime(item.sent),
        h('span', { class: 'name' }, item.name),
        item.alert_type,
        `${item.mechanism_type}: ${item.mechanism}`,
        h(
          'span',
          { class: `badge ${item.status === 'delivered' ? 'good' : item.status === 'failed' ? 'bad' : 'muted'}` },
          item.status ?? '',
        ),
        String(item.attempt ?? ''),
        item.error ?? '',
      ]),
      `No alerts in the last ${data.days} days: deliveries show here when a policy's alert is sent.`,
    ),
    pager(data.page, data.totalPages, actions.showPage),
  );
  return { view, chartBox };
}

/** Destinations: webhooks (create, delete, test) and their last success or failure. */
export function renderDestinations(
  hooks: WebhookDestination[],
  actions: {
    test(hook: WebhookDestination): Promise<string>;
    remove(id: string): Promise<unknown>;
    create(input: { name: string; url: string; secret?: string }): Promise<unknown>;
  },
): HTMLElement {
  const status = notice();
  const tested = notice();
  const name = field('Webhook name', { required: true });
  const url = field('URL', { required: true, type: 'url' });
  const secret = field('Secret (optional)', { type: 'password', autocomplete: 'off' });
  const form = h(
    'form',
    { class: 'card' },
    name.row,
    url.row,
    secret.row,
    h('button', { type: 'submit' }, 'Create webhook'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions
      .create({
        name: name.input.value,
        url: url.input.value,
        ...(secret.input.value ? { secret: secret.input.value } : {}),
      })
      .catch((error: unknown) => status.fail(error));
  });
  return pageView(
    'Notifications',
    tabs('destinations'),
    tested.element,
    table(
      'Webhooks',
      ['Name', 'URL', 'Type', 'Last success', 'Last failure', 'Actions'],
      hooks.map((w) => [
        h('span', { class: 'name' }, w.name),
        w.url,
        w.type,
        formatTime(w.last_success),
        formatTime(w.last_failure),
        h(
          'span',
          { class: 'actions' },
          writeButton(
            'Test',
            () => {
              tested.ok(`Testing "${w.name}"…`);
              void actions
                .test(w)
                .then((text) => (text.includes(': failed') ? tested.fail(new Error(text)) : tested.ok(text)));
            },
            { 'aria-label': `Test ${w.name}` },
          ),
          writeButton('Delete', async () => {
            if (!(await confirmDialog(`Delete the webhook "${w.name}"?`, 'Delete'))) return;
            actions.remove(w.id).catch((error: unknown) => status.fail(error));
          }),
        ),
      ]),
      'No webhooks yet: create one below.',
    ),
    h('h2', null, 'Create a webhook'),
    guardForm(form),
  );
}
