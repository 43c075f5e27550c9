import { field, formatBytes, formatTime, h, table } from '../dom.ts';
import { href } from '../router.ts';
import { confirmDialog, guardForm, notice, pageView, writeButton } from '../ui-kit.ts';

export interface Database {
  uuid: string;
  name: string;
  created_at: string;
  num_tables?: number;
  file_size?: number;
}

/** One statement's answer as the `raw` route gives it. */
export interface RawResult {
  results: { columns: string[]; rows: unknown[][] };
  meta: { changes?: number; rows_read?: number; rows_written?: number; duration?: number };
}

/** "D1 SQL Database": the account's databases, with create and delete; d1.ts loads and saves. */
export function renderDatabases(
  databases: Database[],
  actions: { create(name: string): Promise<unknown>; remove(database: Database): Promise<unknown> },
): HTMLElement {
  const status = notice();
  const name = field(
    'Database name',
    { required: true, pattern: '[A-Za-z0-9][A-Za-z0-9_\\-]{0,63}', autocomplete: 'off' },
    'Letters, digits, "-" and "_", up to 64 characters',
  );
  const form = h(
    'form',
    { class: 'card inline' },
    name.row,
    h('button', { type: 'submit', class: 'primary' }, 'Create database'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.create(name.input.value).catch((error: unknown) => status.fail(error));
  });
  const rows = databases.map((database) => [
    h('a', { href: href('d1', database.uuid) }, database.name),
    h('code', null, database.uuid),
    formatTime(database.created_at),
    h(
      'span',
      { class: 'actions' },
      writeButton('Delete', async () => {
        const question = `Delete the database "${database.name}" and everything in it? This cannot be undone.`;
        if (!(await confirmDialog(question, 'Delete database'))) return;
        actions.remove(database).catch((error: unknown) => status.fail(error));
      }),
    ),
  ]);
  return pageView(
    'D1 SQL Database',
    guardForm(form),
    table(
      `Databases (${databases.length})`,
      ['Database', 'ID', 'Created', 'Actions'],
      rows,
      'No databases yet: create one above, or with wrangler d1 create.',
    ),
  );
}

/** One database: its tables, and a console that runs SQL and shows what each statement answered. */
export function renderDatabase(
  database: Database,
  tables: string[],
  actions: { run(sql: string): Promise<RawResult[]> },
): HTMLElement {
  const status = notice();
  const output = h('div', { class: 'query-results' });
  const sql = h('textarea', { id: 'd1-console', rows: '6', spellcheck: 'false', required: true });
  const form = h(
    'form',
    { class: 'card' },
    h('label', { for: 'd1-console' }, 'SQL'),
    sql,
    h('button', { type: 'submit', class: 'primary' }, 'Run'),
    status.element,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.clear();
    actions
      .run(sql.value)
      .then((results) => {
        output.replaceChildren(...results.map((result, i) => renderResult(result, i + 1)));
        status.ok(`${results.length} statement${results.length === 1 ? '' : 's'} run.`);
      })
      .catch((error: unknown) => status.fail(error));
  });
  return pageView(
    `D1 SQL Database: ${database.name}`,
    h(
      'p',
      null,
      h('a', { href: href('d1') }, 'All databases'),
      ` · ${database.num_tables ?? tables.length} tables · ${formatBytes(database.file_size ?? 0)}`,
    ),
    table(
      `Tables (${tables.length})`,
      ['Table'],
      tables.map((name) => [h('code', null, name)]),
      'No tables yet.',
    ),
    guardForm(form),
    output,
  );
}

/** A statement's rows as a table (every value shown as text), or what it changed. */
function renderResult(result: RawResult, index: number): HTMLElement {
  const { columns, rows } = result.results;
  if (columns.length === 0) {
    return h('p', null, `Statement ${index}: ${result.meta.changes ?? 0} rows changed.`);
  }
  return table(
    `Statement ${index}: ${rows.length} rows`,
    columns,
    rows.map((row) => row.map((value) => (value === null ? h('em', null, 'NULL') : cellText(value)))),
    'No rows.',
  );
}

function cellText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
