// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import { state } from '../state.ts';
import { renderDatabase, renderDatabases } from './d1.render.ts';
import { cellTexts, labelled, signedInAs, submit } from './render-testing.ts';

describe('D1 SQL Database, drawn from its data', () => {
  it('lists databases by name (as text), and create sends the name', () => {
    signedInAs(state, {});
    const create = vi.fn(async () => undefined);
    const markup = '<img src=x onerror=alert(1)>';
    const view = renderDatabases([{ uuid: 'a-b', name: markup, created_at: '' }], {
      create,
      remove: async () => undefined,
    });
    expect(cellTexts([view]).map((row) => row.slice(0, 2))).toEqual([[markup, 'a-b']]);
    expect(view.querySelector('img')).toBeNull();
    labelled(view, 'Database name').value = 'blog';
    submit(view);
    expect(create).toHaveBeenCalledWith('blog');
  });

  it("runs the console's SQL and shows each statement's rows as text", async () => {
    signedInAs(state, {});
    const run = vi.fn(async () => [
      { results: { columns: [], rows: [] }, meta: { changes: 2 } },
      {
        results: {
          columns: ['id', 'note'],
          rows: [
            [1, '<b>x</b>'],
            [2, null],
          ],
        },
        meta: {},
      },
    ]);
    const view = renderDatabase({ uuid: 'a-b', name: 'blog', created_at: '', file_size: 8192 }, ['notes'], { run });
    labelled<HTMLTextAreaElement>(view, 'SQL').value =
      "INSERT INTO notes VALUES (1, '<b>x</b>'), (2, NULL); SELECT * FROM notes";
    submit(view);
    await vi.waitFor(() => expect(view.querySelectorAll('table').length).toBe(2));
    expect(run).toHaveBeenCalledWith("INSERT INTO notes VALUES (1, '<b>x</b>'), (2, NULL); SELECT * FROM notes");
    expect(view.textContent).toContain('Statement 1: 2 rows changed.');
    expect(cellTexts([view.querySelectorAll('table')[1]!])).toEqual([
      ['1', '<b>x</b>'],
      ['2', 'NULL'],
    ]);
    expect(view.querySelector('b')).toBeNull();
  });
});
