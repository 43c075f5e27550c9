import { writeFileSync } from 'node:fs';
import type { AccountService } from '../accounts/index.ts';
import type { BootstrapValues } from './config.ts';

export interface Credentials {
  api_url: string;
  account_id: string;
  email: string;
  api_key: string;
  api_token: string;
}

/**
 * On the first start in an empty data dir: one account, one user with a global API key, and one API
 * token. Returns the secret values so they can be shown once; only their hashes stay in the database.
 */
export async function bootstrapIfEmpty(
  accounts: AccountService,
  values: BootstrapValues,
): Promise<Omit<Credentials, 'api_url'> | undefined> {
  if (!(await accounts.isEmpty())) return undefined;
  const email = values.email ?? 'admin@ledge.localhost';
  const account = await accounts.createAccount({ name: `${email}'s Account`, id: values.accountId });
  const { user, apiKey } = await accounts.createUser({ email, apiKey: values.apiKey });
  await accounts.addMember(account.id, user.id);
  const { value } = await accounts.createToken({ userId: user.id, name: 'bootstrap token', value: values.apiToken });
  return { account_id: account.id, email, api_key: apiKey, api_token: value };
}

/** credentials.json is readable by its owner only: it holds a key and a token in clear. */
export function writeCredentialsFile(path: string, credentials: Credentials): void {
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}
