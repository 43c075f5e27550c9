// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { cellTexts, signedInAs } from './render-testing.ts';
import { renderScriptDetail, renderScripts, type ScriptPage } from './workers.render.ts';

const parts = () => ({
  requests: document.createElement('div'),
  status: document.createElement('p'),
  logs: document.createElement('section'),
});

const page = (overrides: Partial<ScriptPage> = {}): ScriptPage => ({
  script: 'hello',
  deployments: [],
  bindings: [],
  secrets: [],
  schedules: [],
  runs: [],
  assets: null,
  route: { enabled: false },
  ...overrides,
});

describe('the Workers views, drawn from their data', () => {
  it('lists the scripts, each a link to its page, a name staying text', () => {
    signedInAs(state, {});
    const markup = '<img src=x onerror=alert(1)>';
    const view = renderScripts([
      { id: 'hello', created_on: '', modified_on: '' },
      { id: markup, created_on: '', modified_on: '' },
    ]);
    expect(view.textContent).toContain('Scripts (2)');
    expect(cellTexts([view]).map((row) => row[0])).toEqual(['hello', markup]);
    expect(view.querySelector('img')).toBeNull();
    expect(view.querySelector('a[href*="hello"]')).not.toBeNull();
  });

  it("shows a script's route, deployments, bindings' targets, secret names, assets and runs", () => {
    signedInAs(state, {});
    const view = renderScriptDetail(
      page({
        route: { enabled: true, url: 'http://hello.acc.localhost:8788/' },
        deployments: [
          {
            id: 'd1',
            created_on: '',
            source: 'wrangler',
            strategy: 'percentage',
            author_email: 'me@example.com',
            versions: [{ version_id: '0123456789abcdef', percentage: 100 }],
          },
        ],
        bindings: [
          { type: 'r2_bucket', name: 'PHOTOS', bucket_name: 'photos' },
          { type: 'plain_text', name: 'GREETING', text: 'hi' },
          { type: 'secret_text', name: 'KEY' },
        ],
        secrets: [{ name: 'KEY', type: 'secret_text' }],
        assets: {
          files: 3,
          total_bytes: 2048,
          binding: 'ASSETS',
          config: { not_found_handling: 'single-page-application', has_headers: true, has_redirects: false },
        },
        schedules: [{ cron: '*/5 * * * *', created_on: '', modified_on: '' }],
        runs: [
          {
            id: 'r1',
            cron: '*/5 * * * *',
            scheduled_time: '',
            source: 'schedule',
            status: 'exception',
            started_on: '',
            duration_ms: 12,
            error: 'Error: boom',
          },
        ],
      }),
      parts(),
      { runCron: () => {} },
    );
    expect(view.querySelector('a[href="http://hello.acc.localhost:8788/"]')).not.toBeNull();
    const rows = cellTexts([view]);
    expect(rows).toContainEqual(['', '01234567 (100%)', 'wrangler', 'me@example.com']);
    expect(rows).toContainEqual(['PHOTOS', 'r2_bucket', 'photos']);
    expect(rows).toContainEqual(['GREETING', 'plain_text', 'hi']);
    expect(rows).toContainEqual(['KEY', 'secret_text', '']);
    expect(rows).toContainEqual(['KEY', 'secret_text']);
    expect(rows).toContainEqual([
      '3',
      '2.0 KiB',
      'ASSETS',
      'html_handling: auto-trailing-slash, not_found_handling: single-page-application, _headers',
    ]);
    expect(rows).toContainEqual(['*/5 * * * *', '', 'exception', '12 ms', 'Error: boom']);
  });

  it('says what is missing, and "Run now" runs that schedule', () => {
    signedInAs(state, {});
    const runCron = vi.fn();
    const view = renderScriptDetail(
      page({ schedules: [{ cron: '0 * * * *', created_on: '', modified_on: '' }] }),
      parts(),
      {
        runCron,
      },
    );
    expect(view.textContent).toContain('Not routed on workers.dev.');
    expect(view.textContent).toContain('The current version has no static assets.');
    expect(cellTexts([view])).toContainEqual(['No deployments yet.']);
    const run = Array.from(view.querySelectorAll('button')).find((b) => b.textContent === 'Run now');
    run?.click();
    expect(runCron).toHaveBeenCalledWith('0 * * * *');
  });

  it('offers no "Run now" to a read-only session', () => {
    signedInAs(state, { read_only: true });
    const view = renderScriptDetail(
      page({ schedules: [{ cron: '0 * * * *', created_on: '', modified_on: '' }] }),
      parts(),
      {
        runCron: () => {},
      },
    );
    expect(Array.from(view.querySelectorAll('button')).some((b) => b.textContent === 'Run now' && !b.disabled)).toBe(
      false,
    );
  });
});
