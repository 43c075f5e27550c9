// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { locationName, publicUrl, renderBucketSettings, type BucketSettingsData } from './bucket-settings.render.ts';
import { signedInAs } from './render-testing.ts';

const data = (fields: Partial<BucketSettingsData> = {}): BucketSettingsData => ({
  bucket: 'photos',
  cors: { value: { rules: [] } },
  lifecycle: { value: { rules: [] } },
  publicAccess: { value: { managed: { domain: 'pub-abc.r2.localhost', enabled: true }, custom: [] } },
  publicPort: 8788,
  ...fields,
});
const actions = () => ({
  saveCors: vi.fn(async () => undefined),
  saveLifecycle: vi.fn(async () => undefined),
  setManaged: vi.fn(async () => undefined),
});
const byLabel = (root: Element, text: string, nth = 0) => {
  const label = Array.from(root.querySelectorAll('label')).filter((l) => l.textContent === text)[nth]!;
  return root.querySelector<HTMLInputElement>(`#${CSS.escape(label.htmlFor)}`)!;
};
const clickButton = (root: Element, text: string) =>
  Array.from(root.querySelectorAll('button'))
    .find((b) => b.textContent === text)!
    .click();
const submitForm = (root: Element, name: string) =>
  root.querySelector(`form[aria-label="${name}"]`)!.dispatchEvent(new Event('submit', { cancelable: true }));

describe('bucket settings, drawn from their data', () => {
  it('shows the public URL with its scheme and the real port, for the managed domain and custom domains', () => {
    signedInAs(state, {});
    const view = renderBucketSettings(
      data({
        publicAccess: {
          value: {
            managed: { domain: 'pub-abc.r2.localhost', enabled: true },
            custom: [{ domain: 'cdn.example.com', enabled: true, status: { ownership: 'active' } }],
          },
        },
      }),
      actions(),
    );
    expect(view.querySelector('a[target=_blank]')!.textContent).toBe('http://pub-abc.r2.localhost:8788/');
    expect(view.textContent).toContain('http://cdn.example.com:8788/');
    expect(publicUrl('h', undefined)).toBe('http://h/');
  });

  it('edits CORS as a form: a rule added, its origins and methods sent as the API takes them', () => {
    signedInAs(state, {});
    const act = actions();
    const view = renderBucketSettings(data(), act);
    expect(view.querySelector('textarea')).toBeNull();
    clickButton(view.querySelector('form[aria-label="CORS policy"]')!, 'Add a rule');
    byLabel(view, 'Allowed origins').value = 'https://app.example, https://*.example.com';
    byLabel(view, 'PUT').checked = true;
    byLabel(view, 'Max age (seconds)').value = '600';
    submitForm(view, 'CORS policy');
    expect(act.saveCors).toHaveBeenCalledWith({
      rules: [
        {
          allowed: { origins: ['https://app.example', 'https://*.example.com'], methods: ['GET', 'PUT'] },
          maxAgeSeconds: 600,
        },
      ],
    });
  });

  it('edits lifecycle rules as a form: days become seconds, a date an ISO date, and an existing rule is kept as it was', () => {
    signedInAs(state, {});
    const act = actions();
    const existing = {
      id: 'logs',
      enabled: true,
      conditions: { prefix: 'logs/' },
      deleteObjectsTransition: { condition: { type: 'Age' as const, maxAge: 30 * 86_400 } },
    };
    const view = renderBucketSettings(data({ lifecycle: { value: { rules: [existing] } } }), act);
    expect(byLabel(view, 'Prefix').value).toBe('logs/');
    clickButton(view.querySelector('form[aria-label="Object lifecycle rules"]')!, 'Add a rule');
    byLabel(view, 'Prefix', 1).value = 'tmp/';
    const when = view.querySelectorAll<HTMLSelectElement>('select[aria-label="Delete objects: when"]')[1]!;
    when.value = 'Date';
    view.querySelectorAll<HTMLInputElement>('input[aria-label="Delete objects: days or date"]')[1]!.value =
      '2027-01-31';
    submitForm(view, 'Object lifecycle rules');
    expect(act.saveLifecycle).toHaveBeenCalledWith({
      rules: [
        existing,
        {
          id: 'rule-2',
          enabled: true,
          conditions: { prefix: 'tmp/' },
          deleteObjectsTransition: { condition: { type: 'Date', date: '2027-01-31T00:00:00Z' } },
        },
      ],
    });
  });

  it('says a setting this server lacks is not available, instead of a form', () => {
    signedInAs(state, {});
    const view = renderBucketSettings(data({ lifecycle: { unavailable: 'no such route (7003)' } }), actions());
    expect(view.querySelector('form[aria-label="Object lifecycle rules"]')).toBeNull();
    expect(view.textContent).toContain('Not available on this server: no such route (7003)');
  });

  it('explains location codes', () => {
    expect(locationName('enam')).toBe('Eastern North America (ENAM)');
    expect(locationName(undefined)).toBe('Automatic');
  });
});
