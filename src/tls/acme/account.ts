import * as acme from 'acme-client';
import type { SqlExecutor } from '../../db/index.ts';
import type { SecretBox } from '../../shared/crypto.ts';

/**
 * acme-client's own polling and retries (a pending challenge, a 5xx): about 25 s in all, then the order
 * fails and the manager's backoff (recorded, visible in the API) takes over.
 */
const CLIENT_BACKOFF = { backoffAttempts: 5, backoffMin: 1000, backoffMax: 10_000 };

const aad = (directoryUrl: string) => `acme account key ${directoryUrl}`;

/**
 * The installation's ACME account at one directory: its key is made once (ECDSA P-256), sealed with the
 * server's secret key and shared by every node through the database; the account URL is kept with it.
 */
export async function acmeClient(
  db: SqlExecutor,
  box: SecretBox,
  directoryUrl: string,
  contactEmail: string | undefined,
  now: string,
): Promise<acme.Client> {
  const row = await db.get<{ sealed_key: string; account_url: string }>(
    'SELECT sealed_key, account_url FROM tls_acme_account WHERE directory_url = ?',
    [directoryUrl],
  );
  if (row) {
    return new acme.Client({
      directoryUrl,
      accountKey: box.open(row.sealed_key, aad(directoryUrl)),
      accountUrl: row.account_url,
      ...CLIENT_BACKOFF,
    });
  }
  const accountKey = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString('utf8');
  const client = new acme.Client({ directoryUrl, accountKey, ...CLIENT_BACKOFF });
  await client.createAccount({
    termsOfServiceAgreed: true,
    ...(contactEmail ? { contact: [`mailto:${contactEmail}`] } : {}),
  });
  await db.run(
    'INSERT INTO tls_acme_account (directory_url, sealed_key, account_url, created_on) VALUES (?, ?, ?, ?) ON CONFLICT (directory_url) DO NOTHING',
    [directoryUrl, box.seal(accountKey, aad(directoryUrl)), client.getAccountUrl(), now],
  );
  // Another node may have registered first: use the stored one.
  return acmeClient(db, box, directoryUrl, contactEmail, now);
}
