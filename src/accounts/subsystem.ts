import type { SqlDatabase } from '../db/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { AccessChanges } from '../shared/grant-watch.ts';
import type { Subsystem } from '../api-kit/subsystem.ts';
import { accountRoutes } from './routes.ts';
import { AccountManagement } from './management.ts';
import { managementRoutes } from './management-routes.ts';
import { AccountService } from './service.ts';
import { SqlAccountStore } from './store.ts';

export interface AccountsSubsystem extends Subsystem {
  service: AccountService;
}

/** Accounts, users, keys, tokens and memberships: /user, /user/tokens, /accounts, /accounts/{id}/members, /memberships. */
export function createAccountsSubsystem(deps: {
  db: SqlDatabase;
  /** Told when access is taken away (a token deleted or rolled, a member removed or demoted, an account left). */
  accessChanges?: AccessChanges | undefined;
  /** When tokens start and stop working, and what new records are stamped with. */
  clock: Clock;
}): AccountsSubsystem {
  const store = new SqlAccountStore(deps.db, deps.clock);
  const service = new AccountService(store, deps.accessChanges, deps.clock);
  return {
    name: 'accounts',
    service,
    background: [],
    mountRoutes: (api) => {
      api.route('/', accountRoutes(service));
      // After /user/tokens/verify, which is not a token id.
      api.route('/', managementRoutes(new AccountManagement(store, deps.accessChanges, deps.clock)));
    },
  };
}
