import type { SqlDatabase } from '../db/index.ts';
import type { Subsystem } from '../api/subsystem.ts';
import { accountRoutes } from './routes.ts';
import { AccountService } from './service.ts';
import { SqlAccountStore } from './store.ts';

export interface AccountsSubsystem extends Subsystem {
  service: AccountService;
}

/** Accounts, users, keys, tokens and memberships: /user, /accounts, /memberships. */
export function createAccountsSubsystem(deps: { db: SqlDatabase }): AccountsSubsystem {
  const service = new AccountService(new SqlAccountStore(deps.db));
  return {
    name: 'accounts',
    service,
    background: [],
    mountRoutes: (api) => api.route('/', accountRoutes(service)),
  };
}
