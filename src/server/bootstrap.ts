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
 * credentials.json that names nothing. The owner's rows go in one transaction that first checks that no
 * account exists, so nodes starting together on one PostgreSQL database bootstrap once.
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
  const owner = { accountId: credentials.account_id, email, apiKey: credentials.api_key, token: credentials.api_token };
  try {
    accounts.checkNewCredentials(owner);
  } catch (error) {
    throw new Error(`invalid LEDGE_BOOTSTRAP_* value: ${(error as Error).message}`, { cause: error });
  }
  const temporary = `${credentialsPath}.tmp`;
  writeSecretFile(temporary, credentials);
  let created: boolean;
  try {
    created = (await accounts.createOwner(owner)) !== undefined;
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  // Another node on the same database bootstrapped first: its credentials are the ones that exist.
  if (!created) {
    rmSync(temporary, { force: true });
    return undefined;
  }
  renameSync(temporary, credentialsPath);
  return credentials;
}

/** credentials.json is readable by its owner only: it holds a key and a token in clear. */
function writeSecretFile(path: string, credentials: Credentials): void {
  rmSync(path, { force: true });
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
}
