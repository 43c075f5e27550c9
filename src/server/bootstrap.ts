import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AccountService } from '../accounts/index.ts';
import { newGlobalApiKey, newId, newSecret } from '../shared/ids.ts';
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
 * token, written to credentials.json. Returns them so they can be shown once; only their hashes stay in
 * the database. Values are checked before the first row is written, and the file is written under a
 * temporary name before it and put in place after the last row: a failing first start leaves neither a
 * half-made owner (the next start would see a non-empty database and never show credentials) nor a
 * credentials.json that names nothing.
 */
export async function bootstrapIfEmpty(
  accounts: AccountService,
  values: BootstrapValues,
  apiUrl: string,
  credentialsPath: string,
): Promise<Credentials | undefined> {
  if (!(await accounts.isEmpty())) return undefined;
  const email = values.email ?? 'admin@ledge.localhost';
  const credentials: Credentials = {
    api_url: apiUrl,
    account_id: values.accountId ?? newId(),
    email,
    api_key: values.apiKey ?? newGlobalApiKey(),
    api_token: values.apiToken ?? newSecret(30),
  };
  try {
    accounts.checkNewCredentials({
      accountId: credentials.account_id,
      email,
      apiKey: credentials.api_key,
      token: credentials.api_token,
    });
  } catch (error) {
    throw new Error(`invalid LEDGE_BOOTSTRAP_* value: ${(error as Error).message}`, { cause: error });
  }
  const temporary = `${credentialsPath}.tmp`;
  writeSecretFile(temporary, credentials);
  try {
    const account = await accounts.createAccount({ name: `${email}'s Account`, id: credentials.account_id });
    const { user } = await accounts.createUser({ email, apiKey: credentials.api_key });
    await accounts.addMember(account.id, user.id);
    await accounts.createToken({ userId: user.id, name: 'bootstrap token', value: credentials.api_token });
    renameSync(temporary, credentialsPath);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return credentials;
}

/** credentials.json is readable by its owner only: it holds a key and a token in clear. */
function writeSecretFile(path: string, credentials: Credentials): void {
  rmSync(path, { force: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
}
