import { Agent, request } from 'undici';
import { D1_DATABASE_HEADER } from '../workerd/index.ts';
import { D1Errors } from './errors.ts';
import type { QueryParam, StatementResult } from './schemas.ts';

/** How D1 reaches an account's engine: its socket, once the account's process listens (engine-host.ts). */
export interface D1EngineSockets {
  socketPath(kind: 'd1', accountId: string): string;
  ensure(accountId: string): Promise<void>;
}

export interface EngineStatement {
  sql: string;
  params?: QueryParam[] | undefined;
}

/** What the engine (workerd's bundled d1.js) answers on POST /query, per statement. */
type Answer = {
  success: true;
  results: { columns: string[]; rows: unknown[][] } | unknown[];
  meta: StatementResult['meta'];
};
type Failure = { success: false; error: string };

/** The header a session's bookmark travels in, both ways. */
const BOOKMARK = 'x-cf-d1-session-commit-token';
const EXPORT = 'PRAGMA miniflare_d1_export(?,?,?);';

/**
 * Talks to a database over the engine's HTTP protocol (the one workerd's d1 binding speaks without the
 * `d1_binding_jsrpc` flag): POST /query with the statements, all run in one transaction. It reaches the same
 * socket as a bound script's, the database named by the same header.
 */
export class D1EngineClient {
  readonly #sockets: D1EngineSockets;
  readonly #agents = new Map<string, Agent>();

  constructor(sockets: D1EngineSockets) {
    this.#sockets = sockets;
  }

  /**
   * Runs `statements` in one transaction; a SQL error rolls all of them back and throws D1's 7500. With
   * `bookmark`, the answer carries the database's bookmark after the call (the engine answers one only when
   * asked, as the binding's sessions ask).
   */
  async run(
    accountId: string,
    databaseId: string,
    statements: EngineStatement[],
    options: { bookmark?: boolean } = {},
  ): Promise<{ results: StatementResult[]; bookmark?: string | undefined }> {
    const { answers, bookmark } = await this.#post(accountId, databaseId, statements, options.bookmark ?? false);
    const results = answers.map((answer) => {
      const rowsAndColumns = answer.results as { columns: string[]; rows: unknown[][] };
      return { columns: rowsAndColumns.columns, rows: rowsAndColumns.rows, meta: answer.meta };
    });
    return { results, bookmark };
  }

  /** The database as SQL statements (the engine's port of SQLite's `.dump`). */
  async dump(
    accountId: string,
    databaseId: string,
    options: { noSchema: boolean; noData: boolean; tables: string[] },
  ): Promise<string[]> {
    const {
      answers: [answer],
    } = await this.#post(
      accountId,
      databaseId,
      [{ sql: EXPORT, params: [options.noSchema, options.noData, ...options.tables] }],
      false,
    );
    const lines = (answer?.results as unknown[] | undefined)?.[0];
    if (!Array.isArray(lines)) throw D1Errors.unavailable('the engine answered the export without statements');
    return lines as string[];
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  async #post(
    accountId: string,
    databaseId: string,
    statements: EngineStatement[],
    bookmarked: boolean,
  ): Promise<{ answers: Answer[]; bookmark?: string | undefined }> {
    let body: unknown;
    let bookmark: string | undefined;
    try {
      await this.#sockets.ensure(accountId);
      const answer = await request('http://d1/query?resultsFormat=ROWS_AND_COLUMNS', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [D1_DATABASE_HEADER]: databaseId,
          ...(bookmarked ? { [BOOKMARK]: 'first-primary' } : {}),
        },
        body: JSON.stringify(statements.map((s) => ({ sql: s.sql, params: s.params ?? [] }))),
        dispatcher: this.#agent(accountId),
      });
      const header = answer.headers[BOOKMARK];
      bookmark = typeof header === 'string' ? header : undefined;
      body = await answer.body.json();
    } catch (error) {
      throw D1Errors.unavailable(error instanceof Error ? error.message : String(error));
    }
    if (Array.isArray(body)) return { answers: body as Answer[], bookmark };
    const failure = body as Partial<Failure> | null;
    if (failure && failure.success === false && typeof failure.error === 'string') throw D1Errors.query(failure.error);
    throw D1Errors.unavailable('the engine answered something that is not a D1 result');
  }

  #agent(accountId: string): Agent {
    let agent = this.#agents.get(accountId);
    if (!agent) {
      agent = new Agent({ connect: { socketPath: this.#sockets.socketPath('d1', accountId) } });
      this.#agents.set(accountId, agent);
    }
    return agent;
  }
}
