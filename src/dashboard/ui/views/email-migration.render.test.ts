// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { Pool } from '../../../client/index.ts';
import { state } from '../state.ts';
import {
  legacyStatusText,
  progressAfter,
  renderLegacyPools,
  renderMigrationPage,
  renderMigrationPlan,
  renderMigrationResult,
  type MigrationReport,
} from './email-migration.render.ts';
import { cellTexts, signedInAs } from './render-testing.ts';

const report = (fields: Partial<MigrationReport> = {}): MigrationReport => ({
  dry_run: false,
  complete: true,
  pools_scanned: 3,
  pools_with_legacy_email: 2,
  policies_created: ['p1'],
  policies_reused: [],
  pages_patched: 1,
  passes: 1,
  duration_ms: 40,
  ...fields,
});
const pool = (name: string, email: string) => ({ id: name, name, notification_email: email }) as Pool;
const wrap = (children: (Element | null)[]) => {
  const box = document.createElement('div');
  box.append(...children.filter((c): c is Element => c !== null));
  return box;
};

describe('the email migration page, drawn from its data', () => {
  it('offers "Preview policies" and "Run migration", each calling its action', () => {
    signedInAs(state, {});
    const preview = vi.fn();
    const run = vi.fn();
    const page = renderMigrationPage({ preview, run });
    expect(page.view.querySelector('h2')?.textContent).toBe('Email migration');
    const buttons = Array.from(page.view.querySelectorAll('button'));
    buttons.find((b) => b.textContent === 'Preview policies')!.click();
    expect(preview).toHaveBeenCalledOnce();
    page.runButton.click();
    expect(run).toHaveBeenCalledOnce();
    expect(page.view.querySelector('[aria-current="page"]')?.textContent).toBe('Email migration');
  });

  it('offers no write button to a read-only session', () => {
    signedInAs(state, { read_only: true });
    const page = renderMigrationPage({ preview: () => {}, run: () => {} });
    expect(Array.from(page.view.querySelectorAll('button')).every((b) => b.disabled)).toBe(true);
  });

  it('says whether anything is left to migrate', () => {
    expect(legacyStatusText({ complete: true, pools_with_legacy_email: 0 })).toMatch(/nothing to migrate/);
    expect(legacyStatusText({ complete: false, pools_with_legacy_email: 4 })).toMatch(/^4 pool\(s\) still use/);
  });

  it('lists only the pools that carry a legacy email, their addresses as text, with a pager', () => {
    const markup = '<img src=x onerror=alert(1)>';
    const showPage = vi.fn();
    const box = wrap(
      renderLegacyPools(
        {
          items: [pool('web', 'ops@example.com'), pool('api', ''), pool(markup, 'a@example.com')],
          page: 1,
          totalPages: 2,
        },
        { showPage },
      ),
    );
    expect(box.textContent).toContain('page 1 of 2 of all pools');
    expect(cellTexts([box])).toEqual([
      ['web', 'ops@example.com'],
      [markup, 'a@example.com'],
    ]);
    expect(box.querySelector('img')).toBeNull();
    Array.from(box.querySelectorAll('button'))
      .find((b) => b.textContent === 'Next page')!
      .click();
    expect(showPage).toHaveBeenCalledWith(2);
  });

  it("shows a dry run's plan: each policy, its recipients and pool count, and the pages to patch", () => {
    const box = wrap(
      renderMigrationPlan(
        report({
          plan: {
            policies: [
              {
                action: 'create',
                policyId: null,
                name: 'Pool health: ops',
                addresses: ['ops@example.com', 'b@example.com'],
                poolIds: ['a', 'b'],
              },
            ],
            pages_to_patch: [1, 2],
          },
        }),
      ),
    );
    expect(cellTexts([box])).toEqual([['create', 'Pool health: ops', 'ops@example.com, b@example.com', '2']]);
    expect(box.textContent).toContain('2 pool(s) on 2 page(s) will have their notification_email emptied.');
  });

  it("shows a run's result, naming the pools still legacy", () => {
    const done = wrap(renderMigrationResult(report()));
    expect(done.querySelector('h2')?.textContent).toBe('Migration complete');
    expect(Array.from(done.querySelectorAll('li')).map((li) => li.textContent)).toEqual([
      '3 pools scanned',
      '2 pools had a legacy email',
      '1 policies created, 0 reused',
      '1 page(s) patched',
    ]);
    const partial = wrap(
      renderMigrationResult(report({ complete: false, remaining_legacy_pools: [{ id: 'x', name: 'web' }] })),
    );
    expect(partial.querySelector('h2')?.textContent).toBe('Migration incomplete');
    expect(partial.textContent).toContain('Still legacy: web');
  });

  it('counts progress in pages: the listing names the total, each patch one page, 99% at most', () => {
    // The lines as src/email-migration/migrate.ts words them (trimmed by the stream).
    let progress = progressAfter({ totalPages: 0, pagesDone: 0 }, 'Step 1/3: listing pools');
    expect(progress.percent).toBe(5);
    progress = progressAfter(progress, '120 pools, 3 with a legacy notification_email on pages 1, 3');
    expect(progress).toMatchObject({ totalPages: 2, pagesDone: 0, percent: 0 });
    progress = progressAfter(progress, 'page 1: cleared 2 legacy email(s)');
    expect(progress.percent).toBe(50);
    progress = progressAfter(progress, 'page 3: cleared 1 legacy email(s)');
    expect(progress.percent).toBe(99);
    const one = progressAfter({ totalPages: 0, pagesDone: 0 }, '4 pools, 1 with a legacy notification_email on page 1');
    expect(one.totalPages).toBe(1);
  });
});
