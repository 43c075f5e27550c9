// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { NotificationPolicy, WebhookDestination } from '../../../client/index.ts';
import { state } from '../state.ts';
import { HEALTH_ALERT, renderHistory, renderPolicies, renderPolicyForm } from './notifications.render.ts';
import { cellTexts, signedInAs, submit } from './render-testing.ts';

const hook: WebhookDestination = {
  id: 'a1b2c3d4e5f6',
  name: 'pager hook',
  url: 'https://hooks.example.com/x',
  type: 'generic',
  created_at: '2026-01-01T00:00:00Z',
};
const policy = (fields: Partial<NotificationPolicy>): NotificationPolicy => ({
  id: 'pol1',
  name: 'web health',
  description: '',
  enabled: true,
  alert_type: HEALTH_ALERT,
  mechanisms: { email: [{ id: 'ops@example.com' }], webhooks: [{ id: hook.id }] },
  filters: { pool_id: ['p1'] },
  created: '2026-01-01T00:00:00Z',
  modified: '2026-01-01T00:00:00Z',
  ...fields,
});
const checkboxNamed = (root: Element, name: string) => {
  const label = Array.from(root.querySelectorAll('label')).find((l) => l.textContent === name);
  return root.querySelector<HTMLInputElement>(`#${CSS.escape(label!.htmlFor)}`)!;
};

describe('the notification pages, drawn from their data', () => {
  it('lists each policy with its pools and recipients by name, not id', () => {
    signedInAs(state, {});
    const view = renderPolicies(
      {
        policies: [
          policy({}),
          policy({ id: 'pol2', name: 'all', filters: {}, mechanisms: { webhooks: [{ id: 'gone1234567' }] } }),
        ],
        hooks: [hook],
        poolNames: new Map([['p1', 'web']]),
      },
      { test: async () => ({ text: '', failed: false }), remove: async () => undefined },
    );
    const rows = cellTexts([view]).map((row) => row.slice(0, 5));
    expect(rows).toEqual([
      ['web health', HEALTH_ALERT, 'Enabled', 'web', 'ops@example.com, webhook "pager hook"'],
      ['all', HEALTH_ALERT, 'Enabled', 'All pools', 'webhook "webhook gone1234 (deleted)"'],
    ]);
    expect(view.textContent).not.toContain(hook.id);
  });

  it("offers every pool of the account to pick, the one it came from checked, and saves the picked pools' ids", () => {
    signedInAs(state, { email: 'me@example.com' });
    const save = vi.fn(async () => undefined);
    const view = renderPolicyForm(
      {
        alertType: HEALTH_ALERT,
        pools: [
          { id: 'p1', name: 'web' },
          { id: 'p2', name: 'api' },
        ],
        chosenPools: ['p1'],
        hooks: [hook],
        defaultEmail: 'me@example.com',
      },
      { save },
    );
    expect(checkboxNamed(view, 'web').checked).toBe(true);
    expect(checkboxNamed(view, 'api').checked).toBe(false);
    checkboxNamed(view, 'api').checked = true;
    checkboxNamed(view, 'pager hook').checked = true;
    (view.querySelector('input[required]') as HTMLInputElement).value = 'both';
    submit(view);
    expect(save).toHaveBeenCalledWith({
      name: 'both',
      description: '',
      enabled: true,
      alert_type: HEALTH_ALERT,
      mechanisms: { email: [{ id: 'me@example.com' }], webhooks: [{ id: hook.id }] },
      filters: { pool_id: ['p1', 'p2'], new_health: ['Healthy', 'Unhealthy'], event_source: ['pool', 'origin'] },
    });
  });

  it('keeps a deleted pool the policy names listed and checked, by id, so a save does not drop it unseen', () => {
    signedInAs(state, {});
    const view = renderPolicyForm(
      {
        existing: policy({ filters: { pool_id: ['gone'] } }),
        alertType: HEALTH_ALERT,
        pools: [],
        chosenPools: ['gone'],
        hooks: [],
        defaultEmail: '',
      },
      { save: async () => undefined },
    );
    expect(checkboxNamed(view, 'gone (no such pool)').checked).toBe(true);
  });

  it('says when no alert was sent, instead of an empty chart and a bare table', () => {
    const { view } = renderHistory(
      { items: [], page: 1, totalPages: 1, totalCount: 0, days: 7 },
      { showPage: () => {} },
    );
    expect(view.querySelector('.chart')).toBeNull();
    expect(view.textContent).toContain('No alerts were sent in the last 7 days.');
    expect(cellTexts([view])).toEqual([
      ["No alerts in the last 7 days: deliveries show here when a policy's alert is sent."],
    ]);
  });
});
