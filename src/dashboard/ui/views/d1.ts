import { del, enc, get, post } from '../api.ts';
import { replace } from '../dom.ts';
import { acct } from '../state.ts';
import { renderDatabase, renderDatabases, type Database, type RawResult } from './d1.render.ts';

const databasesPath = () => `${acct()}/d1/database`;

/** "D1 SQL Database": the list, with create and delete. */
export async function databases(main: HTMLElement): Promise<void> {
  const list = await get<Database[]>(databasesPath());
  replace(
    main,
    renderDatabases(list, {
      create: async (name) => {
        await post(databasesPath(), { name });
        await databases(main);
      },
      remove: async (database) => {
        await del(`${databasesPath()}/${enc(database.uuid)}`);
        await databases(main);
      },
    }),
  );
}

/** One database: its tables and the query console. */
export async function database(main: HTMLElement, id: string): Promise<void> {
  const base = `${databasesPath()}/${enc(id)}`;
  const found = await get<Database>(base);
  const [listed] = await post<RawResult[]>(`${base}/raw`, {
    sql: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
  });
  const tables = (listed?.results.rows ?? []).map((row) => String(row[0]));
  replace(
    main,
    renderDatabase(found, tables, {
      run: (sql) => post<RawResult[]>(`${base}/raw`, { sql }),
    }),
  );
}
