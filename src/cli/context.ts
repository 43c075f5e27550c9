import type { Command } from 'commander';
import { ApiClient, ApiError, listAccounts } from '../client/index.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import { CliError } from './errors.ts';
import { reportError } from './output.ts';
import { resolveConnection, type Connection, type ConnectionFlags } from './settings.ts';

export type Options = Record<string, unknown> & ConnectionFlags & { json?: boolean };

/** What every command handler gets: its options (global ones included) and lazy API access. */
export class CliContext {
  readonly options: Options;
  /** The command's time (progress rates, "now" in windows); the CLI's entry gives the system's. */
  readonly clock: Clock;
  #connection: Connection | undefined;
  #client: ApiClient | undefined;

  constructor(options: Options, clock: Clock) {
    this.options = options;
    this.clock = clock;
  }

  get json(): boolean {
    return this.options.json === true;
  }

  get connection(): Connection {
    return (this.#connection ??= resolveConnection(this.options));
  }

  /** The API URL, once a command has connected (undefined before, or when connecting failed). */
  get apiUrlInUse(): string | undefined {
    return this.#connection?.apiUrl;
  }

  get client(): ApiClient {
    return (this.#client ??= new ApiClient({ apiUrl: this.connection.apiUrl, auth: this.connection.auth }));
  }

  /** The account to act on: configured, or the only one the credentials can reach. */
  async accountId(): Promise<string> {
    if (this.connection.accountId) return this.connection.accountId;
    const accounts = await listAccounts(this.client);
    if (accounts.length === 1 && accounts[0]) return accounts[0].id;
    if (accounts.length === 0) throw new CliError('these credentials reach no account');
    throw new CliError(
      `these credentials reach ${accounts.length} accounts: choose one with --account-id or LEDGE_ACCOUNT_ID (see \`ledge whoami\`)`,
    );
  }
}

/**
 * Wraps a command handler: builds its context from the parsed options and turns any failure into one
 * error line and exit code (1 for API and user errors, 2 for usage errors).
 */
export function handler(fn: (ctx: CliContext, args: unknown[]) => Promise<void> | void) {
  return async (...params: unknown[]) => {
    const command = params[params.length - 1] as Command;
    const ctx = new CliContext(command.optsWithGlobals() as Options, systemClock);
    try {
      await fn(ctx, params.slice(0, -2));
    } catch (error) {
      process.exitCode = reportError(withApiUrlHint(error, ctx.apiUrlInUse), ctx.json);
    }
  };
}

/**
 * A "no such route" answer from a base URL that does not end with /client/v4 most likely means the URL
 * lacks it (e.g. --api-url http://host:8787/v4): say so next to the API's own message.
 */
function withApiUrlHint(error: unknown, apiUrl: string | undefined): unknown {
  if (!(error instanceof ApiError) || !apiUrl || apiUrl.endsWith('/client/v4')) return error;
  if (error.status !== 404 || ![0, 7003].includes(error.code)) return error;
  const first = error.errors[0] ?? { code: error.code, message: error.message };
  return new ApiError(error.status, [
    { ...first, message: `${first.message} (is ${apiUrl} the API base URL? It usually ends with /client/v4)` },
    ...error.errors.slice(1),
  ]);
}
