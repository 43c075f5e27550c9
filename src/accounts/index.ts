export { accountMigrations } from './migrations.ts';
export { AccountService, isEmail, type S3KeyPair } from './service.ts';
export { SqlAccountStore, type AccountStore, type OwnerRecords } from './store.ts';
export { accountRoutes } from './routes.ts';
export { AuthErrors } from './errors.ts';
export { canAccessAccount, type Principal } from './principal.ts';
export type { Account, ApiToken, Membership, User } from './types.ts';
export { createAccountsSubsystem, type AccountsSubsystem } from './subsystem.ts';
