import type { Database } from '../db/index.ts';
import type { Subsystem } from '../api/subsystem.ts';
import { accountRoutes } from './routes.ts';
import { AccountService } from './service.ts';
import { SqliteAccountStore } from './store.ts';

export interface AccountsSubsystem extends Subsystem {
  service: AccountService;
}

/** Accounts, users, keys, tokens and memberships: /user, /accounts, /memberships. */
export function createAccountsSubsystem(deps: { db: Database }): AccountsSubsystem {
  const service = new AccountService(new SqliteAccountStore(deps.db));
  return {
    name: 'accounts',
    service,
    background: [],
    mountRoutes: (api) => api.route('/', accountRoutes(service)),
  };
}
